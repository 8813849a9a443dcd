package io.github.semyonsinchenko.safetensors.spark.write;

import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.allFiles;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.manifest;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.names;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.shards;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.tensors;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.semyonsinchenko.safetensors.spark.SafetensorsDataSource;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Failed, retried and duplicate task attempts never leave a visible file. local[2,2]: a failed
 * task is retried once.
 */
class WriteFailureTest {
    static SparkSession spark;

    @TempDir
    Path tmp;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[2,2]").appName("safetensors-write-failure-test")
                .config("spark.ui.enabled", "false")
                .getOrCreate();
        // Fails the row with id 115 (partition 1, after it has flushed a 50 MiB shard to staging):
        // on the first attempt only, or always.
        spark.udf().register("fail_first_attempt", (UDF1<Long, Long>) id -> {
            if (id == 115 && TaskContext.get().attemptNumber() == 0) {
                throw new IllegalStateException("injected failure, attempt 0");
            }
            return id;
        }, DataTypes.LongType);
        spark.udf().register("fail_always", (UDF1<Long, Long>) id -> {
            if (id == 115) {
                throw new IllegalStateException("injected failure");
            }
            return id;
        }, DataTypes.LongType);
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    private static void write(String udf, Path out) {
        // 2 tasks x 60 rows x 1 MiB; target 50 MiB, so each task flushes a shard before row 115.
        spark.range(0, 120, 1, 2).selectExpr("concat('k', " + udf + "(id)) as key",
                        "array_repeat(cast(id as float), 262144) as vec")
                .write().format("safetensors").option("name_col", "key").option("target_shard_size_mb", "50")
                .option("generate_index", "true").save(out.toString());
    }

    @Test
    void aRetriedTaskLeavesNoTraceOfItsFailedAttempt() throws Exception {
        Path out = tmp.resolve("retry");
        write("fail_first_attempt", out);
        JsonNode m = manifest(out);
        assertEquals(120, m.get("total_samples").asLong());
        List<String> listed = names(m.get("shards"));
        assertEquals(listed.stream().sorted().toList(),
                shards(out).stream().map(p -> p.getFileName().toString()).toList(),
                "exactly the manifest's shards are at the root");
        assertEquals(120, tensors(out).size(), "every key once");
        assertFalse(Files.exists(out.resolve(DatasetLayout.STAGING)));
    }

    @Test
    void aFailedJobLeavesNothing() throws Exception {
        Path out = tmp.resolve("failed");
        Exception e = assertThrows(Exception.class, () -> write("fail_always", out));
        assertTrue(SafetensorsWriteTest.causes(e).contains("injected failure"));
        assertEquals(List.of(), allFiles(out));
    }

    // ------------------------------------------------------------------ duplicate attempts, driven by hand

    private static final StructType SCHEMA = new StructType().add("key", DataTypes.StringType)
            .add("vec", DataTypes.createArrayType(DataTypes.FloatType));

    private static BatchWrite batchWrite(Path out) {
        Map<String, String> props = new HashMap<>();
        props.put("path", out.toString());
        props.put("name_col", "key");
        props.put(SafetensorsWriteBuilder.SAVE_MODE_OPTION, "ErrorIfExists");
        Table table = new SafetensorsDataSource().getTable(SCHEMA, new Transform[0], props);
        LogicalWriteInfo info = new LogicalWriteInfo() {
            @Override
            public CaseInsensitiveStringMap options() {
                return new CaseInsensitiveStringMap(props);
            }

            @Override
            public String queryId() {
                return "test-query";
            }

            @Override
            public StructType schema() {
                return SCHEMA;
            }
        };
        return ((SupportsWrite) table).newWriteBuilder(info).build().toBatch();
    }

    private static InternalRow row(String key, float v) {
        return new GenericInternalRow(new Object[] {UTF8String.fromString(key), new GenericArrayData(new float[] {v})});
    }

    @Test
    void onlyTheCommittedAttemptOfAPartitionBecomesVisible() throws Exception {
        Path out = tmp.resolve("speculative");
        BatchWrite bw = batchWrite(out);
        DataWriterFactory factory = bw.createBatchWriterFactory(() -> 2);

        // Partition 0: the original attempt (task 10) and a speculative copy (task 11) both write.
        DataWriter<InternalRow> original = factory.createWriter(0, 10);
        DataWriter<InternalRow> speculative = factory.createWriter(0, 11);
        DataWriter<InternalRow> other = factory.createWriter(1, 12);
        original.write(row("a", 1));
        speculative.write(row("a", 1));
        other.write(row("b", 2));
        WriterCommitMessage m0 = original.commit();
        // The speculative copy finished its files but the commit coordinator denied it (or it was
        // killed): its writer is aborted, or never hears again. Here: never aborted, files stay.
        speculative.commit();
        WriterCommitMessage m1 = other.commit();
        for (DataWriter<InternalRow> w : List.of(original, speculative, other)) {
            w.close();
        }
        assertEquals(3, allFiles(out).size(), "three attempt files in staging: " + allFiles(out));
        assertFalse(Files.exists(out.resolve(DatasetLayout.MANIFEST)));

        bw.commit(new WriterCommitMessage[] {m0, m1});
        assertEquals(2, tensors(out).size());
        List<String> files = allFiles(out);
        assertEquals(4, files.size(), files.toString()); // 2 shards + manifest + its history copy
        assertTrue(files.contains(DatasetLayout.MANIFEST));
        assertFalse(files.stream().anyMatch(f -> f.startsWith(DatasetLayout.STAGING)), files.toString());
    }

    @Test
    void abortRemovesEveryAttempt() throws Exception {
        Path out = tmp.resolve("aborted");
        BatchWrite bw = batchWrite(out);
        DataWriterFactory factory = bw.createBatchWriterFactory(() -> 1);
        DataWriter<InternalRow> w = factory.createWriter(0, 1);
        w.write(row("a", 1));
        WriterCommitMessage m = w.commit();
        w.close();
        DataWriter<InternalRow> failed = factory.createWriter(1, 2);
        failed.write(row("b", 1));
        failed.commit(); // files written, then the task fails
        failed.close();
        bw.abort(new WriterCommitMessage[] {m, null});
        assertEquals(List.of(), allFiles(out));
    }
}
