package io.github.semyonsinchenko.safetensors.sampler.db;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.sampler.Fixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The writer reproduces headwater's files byte for byte from their decoded contents. */
class DatabaseWriterTest {
    @TempDir
    Path tmp;

    @Test
    void rewritesTheFixtureByteForByte() throws IOException {
        Path out = Files.createDirectories(tmp.resolve("db"));
        try (Database db = Database.open(Fixtures.db())) {
            DatabaseMetadata m = db.metadata();
            DatabaseWriter.writeMetadata(out, m);
            Graph g = db.graph();
            int n = g.numNodes();
            int[] outPtr = new int[n + 1];
            int[] outIdx = new int[g.numEdges()];
            for (int r = 0; r < n; r++) {
                outPtr[r + 1] = g.outEnd(r);
                for (int k = g.outStart(r); k < g.outEnd(r); k++) {
                    outIdx[k] = g.outNeighbour(k);
                }
            }
            DatabaseWriter.writeGraph(out, outPtr, outIdx);
            for (int t = 0; t < db.numTables(); t++) {
                TableData table = db.table(t);
                int rows = table.numRows();
                List<ColumnValues> cols = new ArrayList<>();
                for (int c = 0; c < table.metadata().numColumns(); c++) {
                    boolean[] valid = new boolean[rows];
                    for (int r = 0; r < rows && table.type(c) != SemanticType.IGNORED; r++) {
                        valid[r] = table.isValid(c, r);
                    }
                    cols.add(switch (table.type(c)) {
                        case IDENTIFIER -> new ColumnValues.Identifier(valid);
                        case NUMERICAL -> {
                            float[] v = new float[rows];
                            for (int r = 0; r < rows; r++) {
                                v[r] = table.numerical(c, r);
                            }
                            yield new ColumnValues.Numerical(valid, v);
                        }
                        case TIMESTAMP -> {
                            float[] v = new float[rows * 15];
                            for (int r = 0; r < rows; r++) {
                                for (int k = 0; k < 15; k++) {
                                    v[r * 15 + k] = table.segment().get(Layouts.F32, table.timestampOffset(c, r) + 4L * k);
                                }
                            }
                            yield new ColumnValues.Timestamp(valid, v);
                        }
                        case BOOLEAN -> {
                            boolean[] v = new boolean[rows];
                            for (int r = 0; r < rows; r++) {
                                v[r] = table.bool(c, r);
                            }
                            yield new ColumnValues.Bool(valid, v);
                        }
                        case CATEGORICAL, TEXT -> {
                            int[] v = new int[rows];
                            for (int r = 0; r < rows; r++) {
                                v[r] = table.embeddingIndex(c, r);
                            }
                            yield new ColumnValues.Indexed(table.type(c), valid, v);
                        }
                        case IGNORED -> new ColumnValues.Ignored(rows);
                    });
                }
                DatabaseWriter.writeTable(out, table.metadata().name(), rows, cols);
            }
            for (int t = 0; t < db.numTasks(); t++) {
                TaskData task = db.task(t);
                int s = task.numSeeds();
                int[] anchors = new int[s];
                long[] times = new long[s];
                boolean[] valid = new boolean[s];
                for (int i = 0; i < s; i++) {
                    anchors[i] = task.anchorRow(i);
                    times[i] = task.observationTime(i);
                    valid[i] = !task.targetIsNull(i);
                }
                ColumnValues target = switch (task.metadata().targetStype()) {
                    case NUMERICAL -> {
                        float[] v = new float[s];
                        for (int i = 0; i < s; i++) {
                            v[i] = task.targetNumerical(i);
                        }
                        yield new ColumnValues.Numerical(valid, v);
                    }
                    case BOOLEAN -> {
                        boolean[] v = new boolean[s];
                        for (int i = 0; i < s; i++) {
                            v[i] = task.targetBoolean(i);
                        }
                        yield new ColumnValues.Bool(valid, v);
                    }
                    case CATEGORICAL -> {
                        int[] v = new int[s];
                        for (int i = 0; i < s; i++) {
                            v[i] = task.targetCategorical(i);
                        }
                        yield new ColumnValues.Indexed(SemanticType.CATEGORICAL, valid, v);
                    }
                    default -> throw new AssertionError("the fixture has no Timestamp task");
                };
                DatabaseWriter.writeTask(out, task.metadata().name(), anchors, times, target);
            }
            EmbeddingTable text = db.textEmbeddings();
            DatabaseWriter.writeEmbeddings(out.resolve(DatabaseLayout.TEXT_EMBEDDINGS_FILE), text.rows(), (i, row) -> {
                for (int k = 0; k < row.length; k++) {
                    row[k] = Float.float16ToFloat(text.row(i).get(Layouts.U16, 2L * k));
                }
            });
        }
        List<String> files = new ArrayList<>(List.of("metadata.json", "graph.bin", "text_embeddings.bin"));
        try (var s = Files.list(Fixtures.db().resolve("tables"))) {
            s.forEach(p -> files.add("tables/" + p.getFileName()));
        }
        try (var s = Files.list(Fixtures.db().resolve("tasks"))) {
            s.forEach(p -> files.add("tasks/" + p.getFileName()));
        }
        assertTrue(files.size() >= 10);
        for (String f : files) {
            assertArrayEquals(Files.readAllBytes(Fixtures.db().resolve(f)), Files.readAllBytes(out.resolve(f)), f);
        }
    }

    @Test
    void refusesMismatchedLengthsAndExistingFiles() throws IOException {
        Path out = Files.createDirectories(tmp.resolve("db"));
        assertThrows(IllegalArgumentException.class, () -> DatabaseWriter.writeTable(out, "t", 3,
                List.of(new ColumnValues.Identifier(new boolean[2]))));
        assertThrows(IllegalArgumentException.class, () -> DatabaseWriter.writeGraph(out, new int[] {0, 1},
                new int[] {1}));
        assertThrows(IllegalArgumentException.class, () -> DatabaseWriter.writeTask(out, "k", new int[1], new long[1],
                new ColumnValues.Indexed(SemanticType.TEXT, new boolean[1], new int[1])));
        DatabaseWriter.writeGraph(out, new int[] {0}, new int[0]);
        assertEquals(24, Files.size(out.resolve("graph.bin")));
        assertThrows(java.nio.file.FileAlreadyExistsException.class,
                () -> DatabaseWriter.writeGraph(out, new int[] {0}, new int[0]));
    }
}
