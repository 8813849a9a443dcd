package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.dataset.CrashPoints;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The child JVM of the crash-point tests: one write of version {@code v} of the test data with a
 * SaveMode. The crash point comes in as the system property {@link CrashPoints#PROPERTY}; when it
 * is reached the JVM halts with {@link CrashPoints#EXIT_STATUS}, otherwise it exits 0.
 *
 * <p>Two drivers of the same write code: {@code spark} runs {@code df.write...save} in a local
 * session (the real thing, ~20 s of JVM and session start on a busy machine); {@code direct} runs
 * the connector's own task writers ({@link ShardDataWriter}) for the two partitions and then its
 * job commit ({@link SafetensorsBatchWrite}) the way Spark calls them, without a session, so a
 * matrix of crashes stays affordable.
 *
 * <p>args: driver (spark|direct), root, save mode, version, rows, retain_versions, orphan_age
 */
public final class CrashChild {
    private CrashChild() {}

    static final StructType SCHEMA = new StructType().add("key", DataTypes.StringType, false)
            .add("vec", DataTypes.createArrayType(DataTypes.FloatType, false), false);

    /** Version {@code v}: {@code rows} rows in two partitions, keys {@code v<v>-<id>}, vec = [v, id]. */
    public static Dataset<Row> data(SparkSession spark, int version, int rows) {
        return spark.range(0, rows, 1, 2).selectExpr("concat('v" + version + "-', id) as key",
                "array(cast(" + version + " as float), cast(id as float)) as vec");
    }

    static Map<String, String> options(String root, String retain, String orphanAge) {
        return Map.of("path", root, "name_col", "key", "generate_index", "true", "retain_versions", retain,
                "orphan_age", orphanAge);
    }

    public static void writeWithSpark(SparkSession spark, String root, String mode, int version, int rows,
                                      String retain, String orphanAge) {
        data(spark, version, rows).write().format("safetensors").mode(mode).options(options(root, retain, orphanAge))
                .save();
    }

    /** The connector's task writers and job commit, called in Spark's order, without Spark. */
    public static void writeDirect(String root, String mode, int version, int rows, String retain, String orphanAge)
            throws Exception {
        SaveMode saveMode = switch (mode) {
            case "errorifexists" -> SaveMode.ErrorIfExists;
            case "ignore" -> SaveMode.Ignore;
            case "overwrite" -> SaveMode.Overwrite;
            default -> SaveMode.Append;
        };
        WriteOptions options = WriteOptions.parse(new CaseInsensitiveStringMap(options(root, retain, orphanAge)),
                SCHEMA, saveMode);
        Configuration conf = new Configuration();
        conf.set("fs.file.impl", RawLocalFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        Path qualified = DatasetFiles.qualifiedRoot(root, conf);
        String jobId = "crash-child-" + java.util.UUID.randomUUID();
        SafetensorsBatchWrite job = new SafetensorsBatchWrite(options, conf, null, true, qualified, jobId);
        String staging = new Path(new Path(qualified, "_staging"), jobId).toString();
        List<WriterCommitMessage> messages = new ArrayList<>();
        // Like spark.range(0, rows, 1, 2): partition 0 holds [0, rows/2), partition 1 the rest.
        int half = rows / 2;
        for (int p = 0; p < 2; p++) {
            DataWriter<InternalRow> w = new ShardDataWriter(options, staging, true, conf, p, p);
            for (int id = p == 0 ? 0 : half; id < (p == 0 ? half : rows); id++) {
                w.write(new GenericInternalRow(new Object[] {UTF8String.fromString("v" + version + "-" + id),
                        new GenericArrayData(new float[] {version, id})}));
            }
            messages.add(w.commit());
            w.close();
        }
        job.commit(messages.toArray(WriterCommitMessage[]::new));
    }

    public static void main(String[] args) throws Exception {
        String root = args[1];
        String mode = args[2];
        int version = Integer.parseInt(args[3]);
        int rows = Integer.parseInt(args[4]);
        if (args[0].equals("direct")) {
            writeDirect(root, mode, version, rows, args[5], args[6]);
        } else {
            SparkSession spark = SparkSession.builder().master("local[2]").appName("safetensors-crash-child")
                    .config("spark.ui.enabled", "false")
                    .config("spark.sql.shuffle.partitions", "2")
                    .getOrCreate();
            spark.sparkContext().setLogLevel("ERROR");
            writeWithSpark(spark, root, mode, version, rows, args[5], args[6]);
            spark.stop();
        }
        System.exit(0);
    }
}
