package io.github.semyonsinchenko.safetensors.preprocess.task;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.semyonsinchenko.safetensors.preprocess.DatabaseFiles;
import io.github.semyonsinchenko.safetensors.preprocess.Fixture;
import io.github.semyonsinchenko.safetensors.preprocess.Preprocessor;
import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.ValueEncoding;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Task files whichever way the anchors are resolved: a broadcast key map (the seeds keep the
 * query's partitions) or a shuffled join above the bound (the seeds are sorted back); and the
 * targets whose encoding needs the statistics first, with nulls.
 */
class TaskWriterTest {

    @TempDir
    Path dataDir;

    private static List<String> run(SparkSession spark, Path dir, String dataset, String bound, long rowsPerPartition) {
        List<String> progress = new ArrayList<>();
        if (bound != null) {
            spark.conf().set(PrimaryKeyMaps.ANCHOR_BYTES_CONF, bound);
        }
        try {
            Preprocessor.run(spark, dir, dataset, Preprocessor.Options.defaults(EmbedderSpec.none())
                    .withRowsPerPartition(rowsPerPartition).withProgress(progress::add));
        } finally {
            spark.conf().unset(PrimaryKeyMaps.ANCHOR_BYTES_CONF);
        }
        return progress;
    }

    private static long count(List<String> progress, String what) {
        return progress.stream().filter(m -> m.contains(what)).count();
    }

    @Test
    void bothJoinPathsWriteHeadwatersTaskFiles() throws IOException {
        SparkSession spark = SparkTestSession.get();
        Path small = dataDir.resolve("broadcast");
        Path large = dataDir.resolve("shuffle");
        Fixture.copyInput(small);
        Fixture.copyInput(large);
        List<String> broadcast = run(spark, small, Fixture.DATASET, null, 97);
        List<String> shuffled = run(spark, large, Fixture.DATASET, "0", 97);
        DatabaseFiles.assertSameDatabase(Fixture.expectedDb(), small.resolve("processed")
                .resolve(Fixture.DATASET), false);
        DatabaseFiles.assertSameDatabase(Fixture.expectedDb(), large.resolve("processed")
                .resolve(Fixture.DATASET), false);
        assertEquals(3, count(broadcast, "seeds, key map broadcast"), broadcast::toString);
        assertEquals(3, count(shuffled, "seeds, key map shuffled"), shuffled::toString);
    }

    @Test
    void numericalAndTimestampTargetsWithNullsAreEncodedWithTheirStatistics() throws IOException {
        SparkSession spark = SparkTestSession.get();
        LocalDateTime[] times = {LocalDateTime.of(2020, 1, 1, 0, 0), LocalDateTime.of(2021, 2, 3, 4, 5), null,
            LocalDateTime.of(2022, 3, 4, 5, 6, 7), LocalDateTime.of(2019, 12, 31, 23, 59)};
        Double[] scores = {1.5, null, -2.0, 4.0, null};
        StructType schema = new StructType().add("Id", DataTypes.LongType).add("Score", DataTypes.DoubleType)
                .add("CreationDate", DataTypes.TimestampNTZType);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            rows.add(RowFactory.create(10L + i, scores[i], times[i]));
        }
        spark.createDataFrame(rows, schema).coalesce(1).write().parquet(dataDir.resolve("raw/tt/a.parquet").toString());
        Files.createDirectories(dataDir.resolve("metadata"));
        Files.writeString(dataDir.resolve("metadata/tt.json"), """
                {"name": "tt", "tables": {"a": {"primary_key": "Id", "temporal_column": "CreationDate", "columns": {
                  "Id": {"stype": "identifier"}, "Score": {"stype": "numerical"},
                  "CreationDate": {"stype": "timestamp"}}}},
                 "tasks": {
                  "num": {"query": "SELECT Id, Score FROM 'a.parquet' ORDER BY Id", "anchor_table": "a",
                   "anchor_key": "Id", "target_column": "Score", "target_stype": "numerical"},
                  "ts": {"query": "SELECT Id, CreationDate AS t FROM 'a.parquet' ORDER BY Id DESC", "anchor_table": "a",
                   "anchor_key": "Id", "target_column": "t", "target_stype": "timestamp"}}}
                """);
        long[] micros = new long[5];
        for (int i = 0; i < 5; i++) {
            micros[i] = times[i] == null ? 0 : times[i].toEpochSecond(ZoneOffset.UTC) * 1_000_000L;
        }
        byte[][] previous = null;
        for (String bound : new String[] {null, "0"}) {
            List<String> progress = run(spark, dataDir, "tt", bound, 2);
            assertEquals(2, count(progress, bound == null ? "key map broadcast" : "key map shuffled"),
                    progress::toString);
            Path db = dataDir.resolve("processed/tt");
            DatabaseMetadata m;
            try (Database opened = Database.open(db)) { // validates every size and index
                m = opened.metadata();
            }

            // Numerical, seeds in Id order: sums in seed order, as headwater's loop.
            double mean = (1.5 + -2.0 + 4.0) / 3;
            double var = ((1.5 - mean) * (1.5 - mean) + (-2.0 - mean) * (-2.0 - mean) + (4.0 - mean) * (4.0 - mean)) / 2;
            double std = Math.sqrt(var);
            assertEquals(new ColumnStats.Numerical(2, -2.0, 4.0, mean, std), m.tasks().get(m.taskIndex("num")).targetStats());
            ByteBuffer num = task(db, "num");
            int[] order = {0, 1, 2, 3, 4};
            assertSeeds(num, order, micros);
            for (int s = 0; s < 5; s++) {
                boolean valid = scores[s] != null;
                assertEquals(valid, bit(num, DatabaseLayout.taskValidityOffset(5), s), "valid " + s);
                float want = valid ? ValueEncoding.zScore(scores[s], mean, std) : 0f;
                assertEquals(want, num.getFloat((int) DatabaseLayout.taskValuesOffset(5) + 4 * s), "value " + s);
            }

            // Timestamp, seeds in descending Id order; the global timestamp statistics scale slot 14.
            int[] desc = {4, 3, 2, 1, 0};
            ByteBuffer ts = task(db, "ts");
            assertSeeds(ts, desc, micros);
            double tsSum = 0;
            for (int i : desc) {
                if (times[i] != null) {
                    tsSum += (double) micros[i];
                }
            }
            double tsMean = tsSum / 4;
            double tsVar = 0;
            for (int i : desc) {
                if (times[i] != null) {
                    tsVar += ((double) micros[i] - tsMean) * ((double) micros[i] - tsMean);
                }
            }
            assertEquals(new ColumnStats.Timestamp(1, micros[4], micros[3], tsMean, Math.sqrt(tsVar / 3)),
                    m.tasks().get(m.taskIndex("ts")).targetStats());
            float[] want = new float[DatabaseLayout.TIMESTAMP_DIM];
            for (int s = 0; s < 5; s++) {
                int i = desc[s];
                assertEquals(times[i] != null, bit(ts, DatabaseLayout.taskValidityOffset(5), s), "valid " + s);
                if (times[i] != null) {
                    ValueEncoding.timestampFeatures(micros[i], m.globalTsMeanUs(), m.globalTsStdUs(), want, 0);
                } else {
                    Arrays.fill(want, 0f);
                }
                for (int f = 0; f < want.length; f++) {
                    assertEquals(want[f], ts.getFloat((int) DatabaseLayout.taskValuesOffset(5)
                            + 4 * (DatabaseLayout.TIMESTAMP_DIM * s + f)), "seed " + s + ", feature " + f);
                }
            }
            byte[][] files = {num.array(), ts.array()};
            if (previous != null) {
                assertArrayEquals(previous[0], files[0], "num: both join paths write the same file");
                assertArrayEquals(previous[1], files[1], "ts: both join paths write the same file");
            }
            previous = files;
        }
    }

    private static ByteBuffer task(Path db, String name) throws IOException {
        return ByteBuffer.wrap(Files.readAllBytes(DatabaseLayout.taskFile(db, name))).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** n, anchor rows and observation times (the anchor row's temporal value; none where it is null). */
    private static void assertSeeds(ByteBuffer task, int[] rows, long[] micros) {
        int n = rows.length;
        assertEquals(n, task.getInt(0));
        int timesAt = (int) DatabaseLayout.taskObservationTimesOffset(n);
        for (int s = 0; s < n; s++) {
            assertEquals(rows[s], task.getInt(8 + 4 * s), "anchor row of seed " + s);
            long want = rows[s] == 2 ? DatabaseLayout.NO_OBSERVATION_TIME : micros[rows[s]];
            assertEquals(want, task.getLong(timesAt + 8 * s), "observation time of seed " + s);
        }
    }

    private static boolean bit(ByteBuffer b, long offset, int i) {
        return (b.get((int) offset + i / 8) >> (i % 8) & 1) != 0;
    }
}
