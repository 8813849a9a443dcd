package io.github.semyonsinchenko.safetensors.preprocess.graph;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.DatabaseFiles;
import io.github.semyonsinchenko.safetensors.preprocess.Fixture;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.preprocess.Preprocessor;
import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The graph's two ways of resolving FK edges, broadcast key maps and shuffled joins (the
 * {@link PrimaryKeyMaps#BROADCAST_LIMIT_CONF} bound set to 0), give the same exact CSR: rows
 * without edges, null and dangling keys (no edge), self-loops, duplicate edges (kept), duplicate
 * primary keys (the last row wins) and null primary keys; and task anchors resolve through the
 * key maps alike, with unique keys (table a) and with a duplicated one (table b).
 */
class GraphPathsTest {

    @TempDir
    Path dataDir;

    @TempDir
    Path scratch;

    // Table a: Id, P -> a.Id, B -> b.Id; table b: Id, A1 -> a.Id, A2 -> a.Id.
    private static final Long[][] A = {{10L, 10L, 100L}, {11L, null, null}, {12L, 99L, 101L}, {13L, 10L, 100L},
        {14L, 13L, 7L}};
    private static final Long[][] B = {{100L, 11L, 11L}, {101L, null, 12L}, {100L, 14L, 10L}, {null, 13L, null}};

    @Test
    void broadcastAndShuffledEdgesGiveTheSameExactGraph() throws IOException {
        writeInput();
        int[] want = expectedGraph();
        assertEquals(12, want[1], "edges of the hand-made input");

        List<String> broadcast = new ArrayList<>();
        Path db = run(null, broadcast);
        assertArrayEquals(want, graph(db), "broadcast key maps");
        assertTrue(broadcast.stream().anyMatch(m -> m.contains("key maps broadcast")), broadcast::toString);
        assertAnchors(db);

        List<String> shuffled = new ArrayList<>();
        db = run("0", shuffled);
        assertArrayEquals(want, graph(db), "shuffled joins");
        assertTrue(shuffled.stream().anyMatch(m -> m.contains("edges by shuffled joins")), shuffled::toString);
        assertAnchors(db);
    }

    /** Seeds in query order; b's key 100 is rows 5 and 7 (global), the last one wins. */
    private static void assertAnchors(Path db) throws IOException {
        assertArrayEquals(new int[] {0, 1, 2, 3, 4}, anchors(db, "ta"), "anchor rows of task ta");
        assertArrayEquals(new int[] {7, 7, 6}, anchors(db, "tb"), "anchor rows of task tb");
    }

    private static int[] anchors(Path db, String task) throws IOException {
        int[] file = DatabaseFiles.ints(Files.readAllBytes(DatabaseLayout.taskFile(db, task)));
        return Arrays.copyOfRange(file, 2, 2 + file[0]);
    }

    private static int[] graph(Path db) throws IOException {
        return DatabaseFiles.ints(Files.readAllBytes(db.resolve(DatabaseLayout.GRAPH_FILE)));
    }

    @Test
    void shuffledJoinsGiveHeadwatersGraphOnTheFixture() throws IOException {
        Fixture.copyInput(dataDir);
        SparkSession spark = SparkTestSession.get();
        List<String> progress = new ArrayList<>();
        spark.conf().set(PrimaryKeyMaps.BROADCAST_LIMIT_CONF, "0");
        try {
            Preprocessor.run(spark, dataDir, Fixture.DATASET, Preprocessor.Options.defaults(EmbedderSpec.none())
                    .withRowsPerPartition(97).withProgress(progress::add));
        } finally {
            spark.conf().unset(PrimaryKeyMaps.BROADCAST_LIMIT_CONF);
        }
        assertTrue(progress.stream().anyMatch(m -> m.contains("edges by shuffled joins")), progress::toString);
        DatabaseFiles.assertSameGraph(
                Files.readAllBytes(Fixture.expectedDb().resolve(DatabaseLayout.GRAPH_FILE)),
                Files.readAllBytes(dataDir.resolve("processed").resolve(Fixture.DATASET)
                        .resolve(DatabaseLayout.GRAPH_FILE)));
    }

    @Test
    void aBadLimitIsATypedError() throws IOException {
        writeInput();
        PreprocessException e = assertThrows(PreprocessException.class, () -> run("many", new ArrayList<>()));
        assertTrue(e.getMessage().contains(PrimaryKeyMaps.BROADCAST_LIMIT_CONF), e.getMessage());
    }

    /** The database of a run with the limit set to {@code limit} (null: the default). */
    private Path run(String limit, List<String> progress) {
        SparkSession spark = SparkTestSession.get();
        if (limit != null) {
            spark.conf().set(PrimaryKeyMaps.BROADCAST_LIMIT_CONF, limit);
        }
        try {
            // Two rows per partition: several outgoing and incoming parts per table.
            Preprocessor.run(spark, dataDir, "g", Preprocessor.Options.defaults(EmbedderSpec.none())
                    .withRowsPerPartition(2).withProgress(progress::add));
        } finally {
            spark.conf().unset(PrimaryKeyMaps.BROADCAST_LIMIT_CONF);
        }
        return dataDir.resolve("processed/g");
    }

    private void writeInput() throws IOException {
        SparkSession spark = SparkTestSession.get();
        StructType a = new StructType().add("Id", DataTypes.LongType).add("P", DataTypes.LongType)
                .add("B", DataTypes.LongType);
        StructType b = new StructType().add("Id", DataTypes.LongType).add("A1", DataTypes.LongType)
                .add("A2", DataTypes.LongType);
        // Table a in two files, the first smaller: its scan is out of row order, so its rows are sorted.
        Path aDir = dataDir.resolve("raw/g/a.parquet");
        Files.createDirectories(aDir);
        Files.move(single(spark, rows(A, 0, 1), a, scratch.resolve("a0")), aDir.resolve("part-0.parquet"));
        Files.move(single(spark, rows(A, 1, A.length), a, scratch.resolve("a1")), aDir.resolve("part-1.parquet"));
        Files.move(single(spark, rows(B, 0, B.length), b, scratch.resolve("b")), dataDir.resolve("raw/g/b.parquet"));
        Files.createDirectories(dataDir.resolve("metadata"));
        Files.writeString(dataDir.resolve("metadata/g.json"), """
                {"name": "g", "tables": {
                  "a": {"primary_key": "Id", "columns": {"Id": {"stype": "identifier"},
                    "P": {"stype": "identifier", "foreign_key": "a.Id"},
                    "B": {"stype": "identifier", "foreign_key": "b.Id"}}},
                  "b": {"primary_key": "Id", "columns": {"Id": {"stype": "identifier"},
                    "A1": {"stype": "identifier", "foreign_key": "a.Id"},
                    "A2": {"stype": "identifier", "foreign_key": "a.Id"}}}},
                 "tasks": {
                  "ta": {"query": "SELECT Id FROM 'a.parquet' ORDER BY Id", "anchor_table": "a", "anchor_key": "Id",
                    "target_column": "Id", "target_stype": "numerical"},
                  "tb": {"query": "SELECT Id, A2 FROM 'b.parquet' WHERE Id IS NOT NULL ORDER BY Id, A2",
                    "anchor_table": "b", "anchor_key": "Id", "target_column": "A2", "target_stype": "numerical"}}}
                """);
    }

    private static List<Row> rows(Long[][] values, int from, int to) {
        List<Row> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(RowFactory.create(values[i][0], values[i][1], values[i][2]));
        }
        return out;
    }

    private static Path single(SparkSession spark, List<Row> rows, StructType schema, Path dir) throws IOException {
        spark.createDataFrame(rows, schema).coalesce(1).write().parquet(dir.toString());
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".parquet")).findFirst().orElseThrow();
        }
    }

    /** graph.bin as ints, from the definition: rows of a then b, each FK of a row one edge if its key resolves. */
    private static int[] expectedGraph() {
        Map<Long, Integer> aRow = new HashMap<>();
        Map<Long, Integer> bRow = new HashMap<>();
        for (int i = 0; i < A.length; i++) {
            aRow.put(A[i][0], i); // later rows overwrite: the last row wins
        }
        for (int i = 0; i < B.length; i++) {
            if (B[i][0] != null) {
                bRow.put(B[i][0], A.length + i);
            }
        }
        int n = A.length + B.length;
        List<List<Integer>> out = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            Long[] row = r < A.length ? A[r] : B[r - A.length];
            List<Map<Long, Integer>> targets = r < A.length ? List.of(aRow, bRow) : List.of(aRow, aRow);
            List<Integer> dsts = new ArrayList<>();
            for (int c = 0; c < 2; c++) {
                Integer d = row[c + 1] == null ? null : targets.get(c).get(row[c + 1]);
                if (d != null) {
                    dsts.add(d);
                }
            }
            dsts.sort(null); // our outgoing lists ascend (Q9 leaves the order free)
            out.add(dsts);
        }
        List<List<Integer>> in = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            in.add(new ArrayList<>());
        }
        for (int r = 0; r < n; r++) {
            for (int d : out.get(r)) {
                in.get(d).add(r); // sources ascend
            }
        }
        int e = out.stream().mapToInt(List::size).sum();
        List<Integer> g = new ArrayList<>(List.of(n, e, n, e));
        for (List<List<Integer>> dir : List.of(out, in)) {
            int at = 0;
            for (List<Integer> l : dir) {
                g.add(at);
                at += l.size();
            }
            g.add(at);
            dir.forEach(g::addAll);
        }
        return g.stream().mapToInt(Integer::intValue).toArray();
    }
}
