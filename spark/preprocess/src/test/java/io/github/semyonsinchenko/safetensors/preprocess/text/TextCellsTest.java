package io.github.semyonsinchenko.safetensors.preprocess.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * The text cells' blocks: every non-null value comes back once, cut as {@link Utf8#truncate}
 * cuts, flagged when cut, with the hash of its cut bytes, in the block of the partition that hash
 * picks, and in scan order within a partition.
 */
class TextCellsTest {

    @Test
    void blocksCarryEveryNonNullCellCutAndHashedToItsPartition() {
        check(TextCells.BUFFERED, TextCells.BLOCK);
    }

    @Test
    void aSmallBudgetSendsEveryOpenBlockEarly() {
        check(64 * 1024, 64 * 1024);
    }

    /** Cells through blocks of at most {@code budget} buffered bytes; no block much larger than {@code largest}. */
    private static void check(long budget, int largest) {
        Random random = new Random(3);
        List<InternalRow> rows = new ArrayList<>();
        List<Long> ats = new ArrayList<>();
        List<String> values = new ArrayList<>();
        for (int i = 0; i < 60_000; i++) { // several blocks per partition
            int pick = random.nextInt(100);
            String v = pick == 0 ? null : pick == 1 ? "" : pick == 2 ? "é".repeat(1500) : pick == 3
                    ? "a".repeat(2047) + "😀" : pick == 4 ? "a".repeat(2048) : "w" + random.nextInt(5000) + "ü";
            long at = (long) (i % 3) << 32 | i;
            rows.add(new GenericInternalRow(new Object[] {at, v == null ? null : UTF8String.fromString(v)}));
            if (v != null) {
                ats.add(at);
                values.add(v);
            }
        }
        int partitions = 7;
        Iterator<Tuple2<Integer, byte[]>> blocks = budget == TextCells.BUFFERED
                ? new TextCells.Blocks(partitions).call(rows.iterator())
                : TextCells.blocks(rows.iterator(), partitions, budget);
        Map<Integer, List<Tuple2<Integer, byte[]>>> byPartition = new HashMap<>();
        int count = 0;
        while (blocks.hasNext()) {
            Tuple2<Integer, byte[]> b = blocks.next();
            assertTrue(b._2().length > 0 && b._2().length < largest + 2 * 4096, "block of " + b._2().length);
            byPartition.computeIfAbsent(b._1(), k -> new ArrayList<>()).add(b);
            count++;
        }
        assertTrue(count > partitions, "blocks are sent as they fill: " + count);
        Map<Long, String> expected = new HashMap<>();
        for (int i = 0; i < ats.size(); i++) {
            expected.put(ats.get(i), values.get(i));
        }
        int seen = 0;
        for (Map.Entry<Integer, List<Tuple2<Integer, byte[]>>> e : byPartition.entrySet()) {
            TextCells.Reader cell = new TextCells.Reader(e.getValue().iterator());
            long previous = -1;
            while (cell.next()) {
                String value = expected.get(cell.at);
                String cut = Utf8.truncate(value, Utf8.MAX_VOCAB_BYTES);
                byte[] bytes = cut.getBytes(StandardCharsets.UTF_8);
                assertEquals(cut, new String(cell.block, cell.offset, cell.length, StandardCharsets.UTF_8));
                assertEquals(cut.equals(value), cell.whole, value.length() + " characters");
                assertEquals(TextCells.hash(bytes, Platform.BYTE_ARRAY_OFFSET, bytes.length), cell.hash);
                assertEquals((int) e.getKey(), Math.floorMod(cell.hash, partitions));
                long row = cell.at & 0xFFFF_FFFFL;
                assertTrue(row > previous, "scan order within a partition");
                previous = row;
                seen++;
            }
        }
        assertEquals(values.size(), seen, "every non-null cell once");
    }

    @Test
    void cutLengthMatchesTruncate() {
        for (String s : List.of("", "short", "a".repeat(2048), "a".repeat(2049), "a".repeat(2047) + "é",
                "a".repeat(2045) + "😀", "a".repeat(2044) + "😀z", "é".repeat(5000))) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            int cut = Utf8.cutLength(b, Platform.BYTE_ARRAY_OFFSET, b.length, Utf8.MAX_VOCAB_BYTES);
            assertEquals(Utf8.truncate(s, Utf8.MAX_VOCAB_BYTES), new String(b, 0, cut, StandardCharsets.UTF_8));
        }
        assertEquals(0, Utf8.cutLength(new byte[0], Platform.BYTE_ARRAY_OFFSET, 0, 4));
    }
}
