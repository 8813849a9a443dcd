package io.github.semyonsinchenko.safetensors.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.loader.ReadCoalescing.Range;
import io.github.semyonsinchenko.safetensors.loader.ReadCoalescing.Read;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ReadCoalescingTest {
    @Test
    void adjacentRangesBecomeOneReadAndABigGapSplits() {
        List<Range> ranges = List.of(new Range(100, 10), new Range(110, 20), new Range(135, 5),
                new Range(1_000, 8));
        List<Read> reads = ReadCoalescing.coalesce(ranges, 16, 1 << 20);
        assertEquals(List.of(new Read(100, 40, List.of(0, 1, 2)), new Read(1_000, 8, List.of(3))), reads);
        // a gap of 5 bytes is over a threshold of 4
        assertEquals(List.of(new Read(100, 30, List.of(0, 1)), new Read(135, 5, List.of(2)),
                new Read(1_000, 8, List.of(3))), ReadCoalescing.coalesce(ranges, 4, 1 << 20));
    }

    @Test
    void theSizeLimitSplitsButNeverSplitsARange() {
        List<Range> ranges = List.of(new Range(0, 60), new Range(60, 60), new Range(120, 500), new Range(620, 1));
        assertEquals(List.of(new Read(0, 120, List.of(0, 1)), new Read(120, 500, List.of(2)),
                new Read(620, 1, List.of(3))), ReadCoalescing.coalesce(ranges, 0, 120));
        // 0: one read per range
        assertEquals(4, ReadCoalescing.coalesce(ranges, 1_000, 0).size());
    }

    @Test
    void inputOrderDoesNotMatterAndMembersIndexTheInput() {
        List<Range> ranges = List.of(new Range(50, 10), new Range(0, 10), new Range(20, 10));
        assertEquals(List.of(new Read(0, 60, List.of(1, 2, 0))), ReadCoalescing.coalesce(ranges, 20, 100));
    }

    @Test
    void badLimitsAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> ReadCoalescing.coalesce(List.of(), -1, 10));
        assertThrows(IllegalArgumentException.class, () -> ReadCoalescing.coalesce(List.of(), 0, -1));
        assertThrows(IllegalArgumentException.class, () -> new Range(-1, 3));
    }

    /** Properties over seeded random inputs (a plain loop, no property library). */
    @Test
    void propertiesHoldOnRandomRanges() {
        Random rnd = new Random(20261123L);
        for (int iter = 0; iter < 2_000; iter++) {
            int n = rnd.nextInt(60);
            List<Range> ranges = new ArrayList<>();
            long at = rnd.nextInt(100);
            for (int i = 0; i < n; i++) {
                long len = switch (rnd.nextInt(4)) {
                    case 0 -> 0;
                    case 1 -> 1 + rnd.nextInt(16);
                    case 2 -> 1 + rnd.nextInt(5_000);
                    default -> 1 + rnd.nextInt(200_000);
                };
                ranges.add(new Range(at, len));
                // mostly disjoint with gaps, sometimes overlapping
                at = Math.max(0, at + len + rnd.nextInt(3_000) - (rnd.nextInt(10) == 0 ? len + 50 : 0));
            }
            Collections.shuffle(ranges, rnd);
            long gap = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(4_000);
            long limit = rnd.nextInt(5) == 0 ? 0 : rnd.nextInt(rnd.nextBoolean() ? 64 : 500_000);
            String ctx = "iteration " + iter + ", gap " + gap + ", limit " + limit;
            List<Read> reads = ReadCoalescing.coalesce(ranges, gap, limit);
            assertEquals(reads, ReadCoalescing.coalesce(ranges, gap, limit), ctx); // deterministic

            int[] seen = new int[n];
            long prevOffset = -1;
            for (Read r : reads) {
                assertTrue(!r.members().isEmpty(), ctx);
                // offset order (reads overlap only where the wanted ranges themselves overlap)
                assertTrue(r.offset() >= prevOffset, "reads in offset order: " + ctx);
                prevOffset = r.offset();
                assertTrue(r.members().size() == 1 || r.length() <= limit, "size limit: " + ctx);
                long coveredTo = r.offset();
                for (int m : r.members()) {
                    seen[m]++;
                    Range x = ranges.get(m);
                    assertTrue(x.offset() >= r.offset() && x.end() <= r.end(), "a member lies inside its read: " + ctx);
                    assertTrue(x.offset() - coveredTo <= gap, "no gap over the threshold inside a read: " + ctx);
                    coveredTo = Math.max(coveredTo, x.end());
                }
                assertEquals(r.end(), coveredTo, "a read ends with its last wanted byte: " + ctx);
            }
            for (int i = 0; i < n; i++) {
                assertEquals(1, seen[i], "range " + i + " served exactly once: " + ctx);
            }
            // Greedy maximality: two neighbouring reads could not have been one.
            for (int k = 1; k < reads.size(); k++) {
                Read a = reads.get(k - 1);
                Range first = ranges.get(reads.get(k).members().getFirst());
                boolean couldJoin = first.offset() - a.end() <= gap
                        && Math.max(a.end(), first.end()) - a.offset() <= limit;
                assertTrue(!couldJoin, "reads " + (k - 1) + " and " + k + " should have been one: " + ctx);
            }
        }
    }
}
