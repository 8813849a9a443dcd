package io.github.semyonsinchenko.safetensors.preprocess.partition;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** When a scan's partitions count as ordered rows, and which partition holds a row. */
class RowRangesTest {

    private static RowRanges.Seen seen(int p, long first, long count) {
        return new RowRanges.Seen(p, first, count, true);
    }

    @Test
    void consecutivePartitionsInOrderAreRanges() {
        // Reported out of order, with an empty partition between and one at the end.
        RowRanges r = RowRanges.of(List.of(seen(2, 5, 3), seen(0, 0, 5), seen(1, -1, 0), seen(3, -1, 0)), 8, 5);
        assertNotNull(r);
        assertArrayEquals(new long[] {0, 5, 5, 8}, r.first());
        assertArrayEquals(new long[] {5, 0, 3, 0}, r.count());
        assertEquals(0, r.partitionOf(0));
        assertEquals(0, r.partitionOf(4));
        assertEquals(2, r.partitionOf(5), "not the empty partition that starts there too");
        assertEquals(2, r.partitionOf(7));
        assertThrows(IllegalArgumentException.class, () -> r.partitionOf(8));
        assertThrows(IllegalArgumentException.class, () -> r.partitionOf(-1));
    }

    @Test
    void anythingElseNeedsTheSort() {
        assertNull(RowRanges.of(List.of(seen(0, 5, 3), seen(1, 0, 5)), 8, 100), "partitions swapped");
        assertNull(RowRanges.of(List.of(seen(0, 0, 5), new RowRanges.Seen(1, 5, 3, false)), 8, 100), "rows not consecutive");
        assertNull(RowRanges.of(List.of(seen(0, 0, 5), seen(1, 6, 2)), 8, 100), "a gap");
        assertNull(RowRanges.of(List.of(seen(0, 0, 5), seen(1, 5, 3)), 9, 100), "a row missing at the end");
        assertNull(RowRanges.of(List.of(seen(0, 0, 5), seen(2, 5, 3)), 8, 100), "a partition missing");
        assertNotNull(RowRanges.of(List.of(), 0, 100), "an empty table");
        assertNull(RowRanges.of(List.of(seen(0, 0, 5), seen(1, 5, 3)), 8, 4), "a partition too large");
    }
}
