package io.github.semyonsinchenko.safetensors.preprocess.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.semyonsinchenko.safetensors.preprocess.Preprocessor;
import io.github.semyonsinchenko.safetensors.preprocess.SparkTestSession;
import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A duplicated primary key resolves to its last row (headwater's map inserts), and a task without
 * an observation-time column takes that row's temporal value, for every seed with the key.
 */
class DuplicateKeyTest {

    @TempDir
    Path dataDir;

    @Test
    void seedsOfADuplicatedKeyGetTheLastRowAndItsTime() throws IOException {
        SparkSession spark = SparkTestSession.get();
        LocalDateTime[] times = {LocalDateTime.of(2020, 1, 1, 0, 0), LocalDateTime.of(2021, 2, 3, 4, 5),
            LocalDateTime.of(2022, 3, 4, 5, 6)};
        StructType schema = new StructType().add("Id", DataTypes.LongType).add("Score", DataTypes.DoubleType)
                .add("CreationDate", DataTypes.TimestampNTZType);
        List<Row> rows = List.of(RowFactory.create(1L, 1.0, times[0]), RowFactory.create(2L, 2.0, times[1]),
                RowFactory.create(1L, 3.0, times[2]));
        spark.createDataFrame(rows, schema).coalesce(1).write().parquet(dataDir.resolve("raw/dup/a.parquet").toString());
        Files.createDirectories(dataDir.resolve("metadata"));
        Files.writeString(dataDir.resolve("metadata/dup.json"), """
                {"name": "dup", "tables": {"a": {"primary_key": "Id", "temporal_column": "CreationDate", "columns": {
                  "Id": {"stype": "identifier"}, "Score": {"stype": "numerical"},
                  "CreationDate": {"stype": "timestamp"}}}},
                 "tasks": {"t": {"query": "SELECT Id, Score FROM 'a.parquet' ORDER BY Id, Score", "anchor_table": "a",
                  "anchor_key": "Id", "target_column": "Score", "target_stype": "numerical"}}}
                """);
        Preprocessor.run(spark, dataDir, "dup", Preprocessor.Options.defaults(EmbedderSpec.none()).withProgress(m -> { }));
        ByteBuffer task = ByteBuffer.wrap(Files.readAllBytes(DatabaseLayout.taskFile(dataDir.resolve("processed/dup"), "t")))
                .order(ByteOrder.LITTLE_ENDIAN);
        int n = task.getInt(0);
        assertEquals(3, n);
        int timesAt = (8 + 4 * n + 7) & ~7;
        // Seeds in query order: (1, 1.0), (1, 3.0), (2, 2.0); key 1 is rows 0 and 2, the last one wins.
        int[] wantRow = {2, 2, 1};
        for (int i = 0; i < n; i++) {
            assertEquals(wantRow[i], task.getInt(8 + 4 * i), "anchor row of seed " + i);
            long micros = times[wantRow[i]].toEpochSecond(ZoneOffset.UTC) * 1_000_000L;
            assertEquals(micros, task.getLong(timesAt + 8 * i), "observation time of seed " + i);
        }
    }
}
