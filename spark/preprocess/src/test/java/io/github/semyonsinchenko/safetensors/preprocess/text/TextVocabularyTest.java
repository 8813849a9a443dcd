package io.github.semyonsinchenko.safetensors.preprocess.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.preprocess.Preprocessor;
import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.partition.RowRanges;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The text vocabulary against a plain driver-side model of its rule: the first occurrence of each
 * cut string in column-then-row order gets the next index; a cell gets its string's index only when
 * its value is uncut (a cut one gets {@link TextIndices#NO_INDEX}), and a null cell gets no pair.
 * Many small partitions, so strings, ranges and target partitions all cross.
 */
class TextVocabularyTest {

    @TempDir
    Path work;

    private static final String LONG_A = "é".repeat(1500); // 3000 bytes: cut to 1024 "é" (2048 bytes)
    private static final String CUT_A = "é".repeat(1024);
    private static final String LONG_B = "a".repeat(2047) + "😀"; // 2051 bytes: cut to 2047 "a"

    @Test
    void indicesAndOrderFollowTheFirstOccurrencesRankedOnTheDriver() {
        List<String> progress = indicesAndOrderFollowTheFirstOccurrences(null);
        assertTrue(progress.stream().anyMatch(m -> m.contains("ranked on the driver")), progress::toString);
    }

    @Test
    void indicesAndOrderFollowTheFirstOccurrencesRankedInCellRanges() {
        List<String> progress = indicesAndOrderFollowTheFirstOccurrences("0");
        assertTrue(progress.stream().anyMatch(m -> m.contains("ranked in")), progress::toString);
    }

    @Test
    void aBadCellBoundIsATypedError() {
        SparkSession spark = SparkTestSession.get();
        BuildContext ctx = new BuildContext(spark, new InputSchema("t", List.of(), List.of()), work, work.resolve("out"),
                Preprocessor.Options.defaults(EmbedderSpec.none()));
        spark.conf().set(TextVocabulary.BROADCAST_CELLS_CONF, "-1");
        try {
            PreprocessException e = assertThrows(PreprocessException.class, () -> TextVocabulary.broadcastCells(ctx));
            assertTrue(e.getMessage().contains(TextVocabulary.BROADCAST_CELLS_CONF), e.getMessage());
        } finally {
            spark.conf().unset(TextVocabulary.BROADCAST_CELLS_CONF);
        }
        assertEquals(TextVocabulary.DEFAULT_BROADCAST_CELLS, TextVocabulary.broadcastCells(ctx));
    }

    @Test
    void firstsNumberStringsAsTheyComeAndKeepTheSmallestPosition() {
        FirstOccurrences.Firsts firsts = new FirstOccurrences.Firsts();
        Map<String, Integer> ids = new HashMap<>();
        Map<String, Long> smallest = new HashMap<>();
        Random random = new Random(5);
        for (int i = 0; i < 200_000; i++) { // many rehashes; some strings longer than a page; first the empty one
            int pick = random.nextInt(60_000);
            String s = i == 0 || pick == 3 ? "" : pick == 7 ? "x".repeat((1 << 20) + 3) : pick % 5 == 0 ? "é" + pick
                    : "s" + pick;
            long at = random.nextLong(1L << 40);
            // Bytes at an offset inside a larger array, as in a row.
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            byte[] padded = new byte[b.length + 9];
            System.arraycopy(b, 0, padded, 5, b.length);
            int id = firsts.add(UTF8String.fromBytes(padded, 5, b.length), at);
            Integer want = ids.putIfAbsent(s, ids.size());
            assertEquals(want == null ? ids.size() - 1 : want, id, s);
            smallest.merge(s, at, Math::min);
        }
        assertEquals(ids.size(), firsts.size());
        for (Map.Entry<String, Integer> e : ids.entrySet()) {
            assertEquals(e.getKey(), firsts.string(e.getValue()));
            assertEquals(smallest.get(e.getKey()), firsts.first(e.getValue()));
        }
    }

    @Test
    void firstIndexCountsTheFirstsBeforeACell() {
        int[] a = {3, 64, 200};
        int[] b = {0, 63, 65, 129};
        FirstOccurrences.FirstIndex index = FirstOccurrences.FirstIndex.of(List.of(a, b), 201);
        assertEquals(7, index.size());
        int[] sorted = {0, 3, 63, 64, 65, 129, 200};
        for (int k = 0; k < sorted.length; k++) {
            assertEquals(k, index.indexOf(sorted[k]));
        }
        assertThrows(IllegalStateException.class, () -> index.indexOf(1));
    }

    /** Builds the vocabulary with {@link TextVocabulary#BROADCAST_CELLS_CONF} set (or not) and checks it; the progress. */
    private List<String> indicesAndOrderFollowTheFirstOccurrences(String broadcastCells) {
        SparkSession spark = SparkTestSession.get();
        Random random = new Random(13);
        // Table a: a numerical column and two text columns; table b: a categorical and a text column.
        List<String[]> a = rows(random, 230, 2);
        List<String[]> b = rows(random, 170, 1);
        // A long value comes first (column x, row 3): its cut string's index is taken there, and the
        // later whole occurrences of that string get it, while the long value itself gets none.
        a.get(3)[0] = LONG_A;
        a.get(100)[1] = CUT_A;
        b.get(5)[0] = CUT_A;
        a.get(7)[0] = LONG_B;
        b.get(0)[0] = LONG_B;
        InputSchema.Table ta = new InputSchema.Table("a", null, null, List.of(
                new InputSchema.Column("n", SemanticType.NUMERICAL, null, null),
                new InputSchema.Column("x", SemanticType.TEXT, null, null),
                new InputSchema.Column("y", SemanticType.TEXT, null, null)));
        InputSchema.Table tb = new InputSchema.Table("b", null, null, List.of(
                new InputSchema.Column("k", SemanticType.CATEGORICAL, null, null),
                new InputSchema.Column("z", SemanticType.TEXT, null, null)));
        InputSchema schema = new InputSchema("t", List.of(ta, tb), List.of());
        LoadedTable la = table(spark, 0, ta, a, new int[] {1, 2}, 0, 0);
        LoadedTable lb = table(spark, 1, tb, b, new int[] {1}, a.size(), 3);
        List<String> progress = new ArrayList<>();
        BuildContext ctx = new BuildContext(spark, schema, work, work.resolve("out"),
                Preprocessor.Options.defaults(EmbedderSpec.none()).withRowsPerPartition(37).withProgress(progress::add));
        if (broadcastCells != null) {
            spark.conf().set(TextVocabulary.BROADCAST_CELLS_CONF, broadcastCells);
        }
        try {
            TextVocabulary vocab = TextVocabulary.build(ctx, List.of(la, lb));

            // The model: cells in global column order, then row order.
            LinkedHashMap<String, Long> index = new LinkedHashMap<>();
            Map<Long, Long> expected = new HashMap<>(); // (global column << 32 | row) -> index
            addColumn(index, expected, a, 0, 1);
            addColumn(index, expected, a, 1, 2);
            addColumn(index, expected, b, 0, 4);
            assertEquals(index.size(), vocab.size());
            assertEquals(new ArrayList<>(index.keySet()), vocab.ordered().collect(), "strings in index order");
            assertEquals(CUT_A, Utf8.truncate(LONG_A, Utf8.MAX_VOCAB_BYTES));

            Map<Long, Long> actual = new HashMap<>();
            collect(vocab, la, new int[] {1, 2}, new RowRanges(new long[] {0, 0, 50, 51, 200}, new long[] {0, 50, 1, 149, 30}),
                    actual);
            collect(vocab, lb, new int[] {1}, new RowRanges(new long[] {0, 100}, new long[] {100, 70}), actual);
            assertEquals(expected, actual, "every non-null cell has a pair, no null one has");
            assertEquals(TextIndices.NO_INDEX, actual.get(1L << 32 | 3), "a cut value finds no index");
            assertEquals(TextIndices.NO_INDEX, actual.get(1L << 32 | 7), "a cut value finds no index");
            assertEquals(TextIndices.NO_INDEX, actual.get(4L << 32), "a cut value finds no index");
            assertEquals(index.get(CUT_A), actual.get(2L << 32 | 100), "the whole cut string has the cut's index");
            assertEquals(index.get(CUT_A), actual.get(4L << 32 | 5));
        } finally {
            ctx.release();
            spark.conf().unset(TextVocabulary.BROADCAST_CELLS_CONF);
        }
        return progress;
    }

    @Test
    void cellRangesAreMonotoneAndCoverEveryRange() {
        int[] columns = {2, 5, 9};
        long[] rows = {10, 0, 33};
        CellRanges r = CellRanges.of(columns, rows, 7);
        assertTrue(r.count() <= 7 && r.count() >= 1);
        int last = 0;
        boolean[] seen = new boolean[r.count()];
        for (int k = 0; k < columns.length; k++) {
            for (long row = 0; row < rows[k]; row++) {
                int range = r.rangeOf((long) columns[k] << 32 | row);
                assertTrue(range >= last, "ranges never decrease");
                last = range;
                seen[range] = true;
            }
        }
        for (boolean s : seen) {
            assertTrue(s, "every range holds cells");
        }
        assertThrows(IllegalArgumentException.class, () -> r.rangeOf(3L << 32));
        assertEquals(1, CellRanges.of(new int[] {0}, new long[] {0}, 4).count());
    }

    /** {@code n} rows of {@code textColumns} strings: few distinct words, some nulls, some multi-byte. */
    private static List<String[]> rows(Random random, int n, int textColumns) {
        String[] words = {"x", "y y", "zé", "😀", "", "abc", "x ", "q"};
        List<String[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String[] r = new String[textColumns];
            for (int c = 0; c < textColumns; c++) {
                int pick = random.nextInt(words.length + 40);
                r[c] = pick < words.length ? words[pick] : pick < words.length + 4 ? null : "s" + random.nextInt(150);
            }
            out.add(r);
        }
        return out;
    }

    /** A loaded table of {@code rows}, text column {@code k} of the rows as schema column {@code textColumns[k]}. */
    private static LoadedTable table(SparkSession spark, int index, InputSchema.Table schema, List<String[]> rows,
            int[] textColumns, long rowStart, int colStart) {
        StructType type = new StructType().add(BuildContext.ROW, DataTypes.LongType, false);
        for (int j : textColumns) {
            type = type.add("c" + j, DataTypes.StringType, true);
        }
        List<Row> data = new ArrayList<>();
        for (int i = 0; i < rows.size(); i++) {
            Object[] values = new Object[1 + textColumns.length];
            values[0] = (long) i;
            System.arraycopy(rows.get(i), 0, values, 1, textColumns.length);
            data.add(RowFactory.create(values));
        }
        Dataset<Row> df = spark.createDataFrame(data, type).repartition(3);
        boolean[] present = new boolean[schema.columns().size()];
        Arrays.fill(present, true);
        return new LoadedTable(index, schema, df, df, rows.size(), rowStart, colStart, present, false, false);
    }

    private static void addColumn(LinkedHashMap<String, Long> index, Map<Long, Long> expected, List<String[]> rows,
            int field, int globalColumn) {
        for (int i = 0; i < rows.size(); i++) {
            String v = rows.get(i)[field];
            if (v == null) {
                continue;
            }
            String key = Utf8.truncate(v, Utf8.MAX_VOCAB_BYTES);
            index.putIfAbsent(key, (long) index.size());
            expected.put((long) globalColumn << 32 | i, key.equals(v) ? index.get(key) : TextIndices.NO_INDEX);
        }
    }

    private static void collect(TextVocabulary vocab, LoadedTable t, int[] textColumns, RowRanges ranges,
            Map<Long, Long> into) {
        List<long[][]> parts = vocab.byPartition(t, textColumns, ranges).collect();
        assertEquals(ranges.partitions(), parts.size());
        for (int p = 0; p < parts.size(); p++) {
            for (int slot = 0; slot < textColumns.length; slot++) {
                long previous = -1;
                for (long packed : parts.get(p)[slot]) {
                    long row = packed >>> 32;
                    assertTrue(row > previous, "rows ascend within a partition");
                    previous = row;
                    assertEquals(p, ranges.partitionOf(row), "row " + row + " is in its partition");
                    long at = (long) (t.colStart() + textColumns[slot]) << 32 | row;
                    into.put(at, packed & 0xFFFF_FFFFL);
                }
            }
        }
    }
}
