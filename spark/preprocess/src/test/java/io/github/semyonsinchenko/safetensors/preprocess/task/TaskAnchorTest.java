package io.github.semyonsinchenko.safetensors.preprocess.task;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.preprocess.Preprocessor;
import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Task anchors resolved through the broadcast anchor map (built for the tasks alone: this schema
 * has no FK, so the graph builds no map) and through the shuffled join above the bound give the
 * same file: seeds whose key is null or dangling are dropped, a duplicated key takes its last row
 * and that row's time (none where it is null), and a categorical target gets its vocabulary index
 * (0 for a null and for a value the vocabulary does not have).
 */
class TaskAnchorTest {

    @TempDir
    Path dataDir;

    private static final LocalDateTime[] TIMES = {LocalDateTime.of(2020, 1, 1, 0, 0), null,
        LocalDateTime.of(2022, 3, 4, 5, 6), LocalDateTime.of(2023, 1, 2, 3, 4), LocalDateTime.of(2019, 5, 6, 7, 8)};

    private void writeInput() throws IOException {
        SparkSession spark = SparkTestSession.get();
        StructType a = new StructType().add("Id", DataTypes.LongType).add("Other", DataTypes.StringType)
                .add("Kind", DataTypes.StringType).add("CreationDate", DataTypes.TimestampNTZType);
        List<Row> aRows = List.of(RowFactory.create(1L, "o1", "x", TIMES[0]), RowFactory.create(2L, "o2", "y", TIMES[1]),
                RowFactory.create(1L, "o1", "y", TIMES[2]), RowFactory.create(null, "o2", "x", TIMES[3]),
                RowFactory.create(3L, null, null, TIMES[4]));
        spark.createDataFrame(aRows, a).coalesce(1).write().parquet(dataDir.resolve("raw/ta/a.parquet").toString());
        StructType q = new StructType().add("Seq", DataTypes.LongType).add("Ref", DataTypes.LongType)
                .add("Label", DataTypes.StringType);
        List<Row> qRows = List.of(RowFactory.create(0L, 1L, "x"), RowFactory.create(1L, 2L, "y"),
                RowFactory.create(2L, 9L, "x"), RowFactory.create(3L, null, "y"), RowFactory.create(4L, 3L, "zz"),
                RowFactory.create(5L, 1L, null), RowFactory.create(6L, 2L, "x"));
        spark.createDataFrame(qRows, q).repartition(3).write().parquet(dataDir.resolve("raw/ta/q.parquet").toString());
        Files.createDirectories(dataDir.resolve("metadata"));
        Files.writeString(dataDir.resolve("metadata/ta.json"), """
                {"name": "ta", "tables": {
                  "a": {"primary_key": "Id", "temporal_column": "CreationDate", "columns": {
                    "Id": {"stype": "identifier"}, "Other": {"stype": "categorical"}, "Kind": {"stype": "categorical"},
                    "CreationDate": {"stype": "timestamp"}}},
                  "q": {"columns": {"Seq": {"stype": "numerical"}, "Ref": {"stype": "identifier"},
                    "Label": {"stype": "ignored"}}}},
                 "tasks": {"kind": {"query": "SELECT Ref AS Id, Label AS Kind FROM 'q.parquet' ORDER BY Seq DESC",
                   "anchor_table": "a", "anchor_key": "Id", "target_column": "Kind", "target_stype": "categorical"}}}
                """);
    }

    private List<String> run(String bound) {
        SparkSession spark = SparkTestSession.get();
        List<String> progress = new ArrayList<>();
        if (bound != null) {
            spark.conf().set(PrimaryKeyMaps.ANCHOR_BYTES_CONF, bound);
        }
        try {
            Preprocessor.run(spark, dataDir, "ta", Preprocessor.Options.defaults(EmbedderSpec.none())
                    .withRowsPerPartition(2).withProgress(progress::add));
        } finally {
            spark.conf().unset(PrimaryKeyMaps.ANCHOR_BYTES_CONF);
        }
        return progress;
    }

    @Test
    void broadcastAndJoinedAnchorsGiveTheSameTaskFile() throws IOException {
        writeInput();
        // Seeds by Seq descending: q6 (key 2), q5 (1), q4 (3), q1 (2), q0 (1); q3 (null key) and q2 (key 9) drop.
        int[] rows = {1, 2, 4, 1, 2}; // key 1 is rows 0 and 2: the last one wins
        Integer[] times = {1, 2, 4, 1, 2}; // the anchor row's time; row 1's is null
        boolean[] valid = {true, false, true, true, true};
        // Vocabulary: "Other is o1" 0, "Other is o2" 1, "Kind is x" 2, "Kind is y" 3; "zz" is not in it.
        int[] values = {2, 0, 0, 3, 2};
        byte[] previous = null;
        for (String bound : new String[] {null, "0"}) {
            List<String> progress = run(bound);
            if (bound == null) {
                assertTrue(progress.contains("  task anchor key maps: a 3 keys with row times"), progress::toString);
                assertTrue(progress.contains("  kind: 5 seeds, key map broadcast"), progress::toString);
            } else {
                assertTrue(progress.contains("  kind: 5 seeds, key map shuffled"), progress::toString);
            }
            Path db = dataDir.resolve("processed/ta");
            DatabaseMetadata m;
            try (Database opened = Database.open(db)) { // validates every size and index
                m = opened.metadata();
            }
            assertEquals(new ColumnStats.Categorical(1, List.of("x", "y", "zz"), 2),
                    m.tasks().get(m.taskIndex("kind")).targetStats());
            byte[] bytes = Files.readAllBytes(DatabaseLayout.taskFile(db, "kind"));
            ByteBuffer file = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            int n = rows.length;
            assertEquals(n, file.getInt(0));
            for (int s = 0; s < n; s++) {
                assertEquals(rows[s], file.getInt(8 + 4 * s), "anchor row of seed " + s);
                LocalDateTime t = TIMES[times[s]];
                long want = t == null ? DatabaseLayout.NO_OBSERVATION_TIME : t.toEpochSecond(ZoneOffset.UTC) * 1_000_000L;
                assertEquals(want, file.getLong((int) DatabaseLayout.taskObservationTimesOffset(n) + 8 * s),
                        "observation time of seed " + s);
                int at = (int) DatabaseLayout.taskValidityOffset(n);
                assertEquals(valid[s], (file.get(at + s / 8) >> (s % 8) & 1) != 0, "valid " + s);
                assertEquals(values[s], file.getInt((int) DatabaseLayout.taskValuesOffset(n) + 4 * s), "value " + s);
            }
            if (previous != null) {
                assertArrayEquals(previous, bytes, "both ways of resolving anchors write the same file");
            }
            previous = bytes;
        }
    }

    @Test
    void aBadByteBoundIsATypedError() throws IOException {
        writeInput();
        PreprocessException e = assertThrows(PreprocessException.class, () -> run("lots"));
        assertTrue(e.getMessage().contains(PrimaryKeyMaps.ANCHOR_BYTES_CONF), e.getMessage());
    }
}
