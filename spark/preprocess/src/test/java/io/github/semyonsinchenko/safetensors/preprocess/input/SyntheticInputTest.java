package io.github.semyonsinchenko.safetensors.preprocess.input;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.preprocess.DatabaseFiles;
import io.github.semyonsinchenko.safetensors.preprocess.Preprocessor;
import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.Layouts;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.TableMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskMetadata;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticDatabase;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The synthetic dataset's two renderings carry the same data: the preprocessor, run on the input
 * {@link SyntheticInput} writes, builds the database {@link SyntheticDatabase} writes directly, up
 * to what the encodings choose (the text vocabulary's order and size, the embeddings, the last
 * bits of the global timestamp statistics and so the timestamps' z-scored slot, and the order of
 * outgoing neighbours within a row, headwater's Q9).
 */
class SyntheticInputTest {

    @TempDir
    Path dataDir;

    @Test
    void thePreprocessorBuildsTheDatabaseTheGeneratorWritesDirectly() throws IOException {
        SparkSession spark = SparkTestSession.get();
        SyntheticInput.write(spark, dataDir, "gen", 3000, 7, 3);
        try (var files = Files.list(dataDir.resolve("raw/gen/posts.parquet"))) {
            assertEquals(3, files.filter(f -> f.toString().endsWith(".parquet")).count(), "three files per table");
        }
        Preprocessor.run(spark, dataDir, "gen", Preprocessor.Options.defaults(EmbedderSpec.hashed())
                .withRowsPerPartition(250).withProgress(x -> { }));
        Path ours = dataDir.resolve("processed/gen");
        try (var left = Files.list(dataDir.resolve("processed"))) {
            assertEquals(1, left.count(), "no temporary directories left next to the database");
        }
        Path direct = SyntheticDatabase.generate(dataDir.resolve("direct"), 3000, 7,
                SyntheticDatabase.Embeddings.ZERO).dir();
        DatabaseMetadata want;
        DatabaseMetadata got;
        try (Database a = Database.open(direct); Database b = Database.open(ours)) { // both fully validated
            want = a.metadata();
            got = b.metadata();
        }
        assertEquals(want.tables(), got.tables());
        assertEquals(want.columns(), got.columns());
        assertEquals(want.columnStats(), got.columnStats(), "every category occurs at 3,000 rows");
        assertEquals(want.tasks(), got.tasks());
        assertEquals(want.globalTsMeanUs(), got.globalTsMeanUs(), 1e-9 * Math.abs(want.globalTsMeanUs()));
        assertEquals(want.globalTsStdUs(), got.globalTsStdUs(), 1e-9 * want.globalTsStdUs());

        DatabaseFiles.assertSameGraph(Files.readAllBytes(direct.resolve(DatabaseLayout.GRAPH_FILE)),
                Files.readAllBytes(ours.resolve(DatabaseLayout.GRAPH_FILE)));
        for (TaskMetadata t : want.tasks()) {
            Path file = DatabaseLayout.taskFile(Path.of(""), t.name());
            assertArrayEquals(Files.readAllBytes(direct.resolve(file)), Files.readAllBytes(ours.resolve(file)),
                    t.name());
        }
        Map<Integer, Integer> textIndex = new HashMap<>(); // ours by the generator's
        for (TableMetadata t : want.tables()) {
            assertSameTable(want.columnTypes(t), t.numRows(), DatabaseLayout.tableFile(direct, t.name()),
                    DatabaseLayout.tableFile(ours, t.name()), textIndex);
        }
        assertEquals(textIndex.size(), new HashSet<>(textIndex.values()).size(), "distinct texts stay distinct");
        assertEquals(textIndex.size() * (long) DatabaseLayout.EMBEDDING_ROW_BYTES,
                Files.size(ours.resolve(DatabaseLayout.TEXT_EMBEDDINGS_FILE)), "one text row per text that occurs");
        for (String f : List.of(DatabaseLayout.COLUMN_EMBEDDINGS_FILE, DatabaseLayout.CATEGORICAL_EMBEDDINGS_FILE)) {
            assertEquals(Files.size(direct.resolve(f)), Files.size(ours.resolve(f)), f);
            assertFalse(DatabaseFiles.allZero(Files.readAllBytes(ours.resolve(f))), f + " from the hashed embedder");
        }
    }

    /**
     * Section by section: bitmaps and values equal, except a text value (the same index mapping
     * throughout, collected in {@code textIndex}) and a timestamp's z-scored slot (within float
     * rounding of the global statistics).
     */
    private static void assertSameTable(List<SemanticType> stypes, int rows, Path want, Path got,
            Map<Integer, Integer> textIndex) throws IOException {
        MemorySegment a = MemorySegment.ofArray(Files.readAllBytes(want));
        MemorySegment b = MemorySegment.ofArray(Files.readAllBytes(got));
        assertEquals(a.byteSize(), b.byteSize(), want.getFileName() + ": size");
        long at = DatabaseLayout.TABLE_HEADER_BYTES;
        for (int c = 0; c < stypes.size(); c++) {
            List<DatabaseLayout.Section> sections = DatabaseLayout.columnSections(stypes.get(c));
            for (int s = 0; s < sections.size(); s++) {
                long size = sections.get(s).bytes(rows);
                String where = want.getFileName() + ", column " + c + " (" + stypes.get(c) + "), section " + s;
                if (s == 1 && stypes.get(c) == SemanticType.TEXT) {
                    long validity = at - sections.get(0).bytes(rows); // the column's first section
                    for (int r = 0; r < rows; r++) {
                        if (isSet(a, validity, r)) {
                            int mine = a.get(Layouts.U32, at + 4L * r);
                            int theirs = b.get(Layouts.U32, at + 4L * r);
                            Integer before = textIndex.putIfAbsent(mine, theirs);
                            assertTrue(before == null || before == theirs, where + ": text " + mine + " got two indices");
                        }
                    }
                } else if (s == 1 && stypes.get(c) == SemanticType.TIMESTAMP) {
                    for (long k = 0; k < rows * (long) DatabaseLayout.TIMESTAMP_DIM; k++) {
                        float x = a.get(Layouts.F32, at + 4 * k);
                        float y = b.get(Layouts.F32, at + 4 * k);
                        if (k % DatabaseLayout.TIMESTAMP_DIM == DatabaseLayout.TIMESTAMP_ZSCORE_SLOT) {
                            assertEquals(x, y, 1e-6f * Math.max(1f, Math.abs(x)), where + ", value " + k);
                        } else {
                            assertEquals(Float.floatToRawIntBits(x), Float.floatToRawIntBits(y), where + ", value " + k);
                        }
                    }
                } else {
                    assertArrayEquals(a.asSlice(at, size).toArray(Layouts.U8), b.asSlice(at, size).toArray(Layouts.U8),
                            where);
                }
                at += size;
            }
        }
        assertEquals(a.byteSize(), at);
    }

    private static boolean isSet(MemorySegment bitmap, long offset, int bit) {
        return (bitmap.get(Layouts.U8, offset + bit / 8) >>> (bit % 8) & 1) != 0;
    }

    @Test
    void theSchemaNamesEveryTableColumnForeignKeyAndTaskOfTheDataset() throws IOException {
        SyntheticData data = SyntheticData.generate(500, 1);
        Path file = dataDir.resolve("schema.json");
        new ObjectMapper().writeValue(file.toFile(), SyntheticInput.schemaJson(data, "x"));
        InputSchema schema = InputSchema.read(file);
        assertEquals(List.of("users", "posts", "comments", "votes"),
                schema.tables().stream().map(InputSchema.Table::name).toList());
        Set<String> labels = new HashSet<>();
        for (int t = 0; t < data.tables().size(); t++) {
            SyntheticData.Table table = data.tables().get(t);
            InputSchema.Table s = schema.tables().get(t);
            assertEquals("Id", s.primaryKey());
            assertEquals(table.columns().get(table.temporal()).name(), s.temporalColumn());
            assertEquals(table.columns().stream().map(SyntheticData.Column::name).toList(),
                    s.columns().stream().map(InputSchema.Column::name).toList());
            for (int j = 0; j < table.columns().size(); j++) {
                SyntheticData.Column c = table.columns().get(j);
                assertEquals(c.stype(), s.columns().get(j).stype());
                assertEquals(c.foreignTable() < 0 ? null : data.tables().get(c.foreignTable()).name(),
                        s.columns().get(j).foreignTable());
            }
            table.labels().forEach(l -> labels.add(l.name()));
        }
        assertEquals(Set.of("ScoreIn30Days"), labels);
        assertEquals(data.tasks().stream().map(SyntheticData.Task::name).toList(),
                schema.tasks().stream().map(InputSchema.Task::name).toList());
        InputSchema.Task active = schema.tasks().get(1);
        assertEquals("no_observation_time", active.observationTimeColumn(), "a task without an observation time");
        assertNull(schema.tasks().get(0).observationTimeColumn(), "observed at the anchor row's time");
        assertEquals("SELECT Id, ScoreIn30Days FROM 'posts.parquet' ORDER BY Id", schema.tasks().get(0).query());
        assertTrue(Arrays.asList(SemanticType.values()).containsAll(
                schema.tables().stream().flatMap(t -> t.columns().stream()).map(InputSchema.Column::stype).toList()));
    }
}
