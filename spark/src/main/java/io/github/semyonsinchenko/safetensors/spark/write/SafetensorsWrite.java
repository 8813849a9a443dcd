package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.spark.conf.SparkHadoopConfs;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.util.SerializableConfiguration;

/** An immutable description of one write; {@link #toBatch()} ships the Hadoop configuration once. */
final class SafetensorsWrite implements Write {
    private final WriteOptions options;
    private final Configuration conf;
    private final boolean collectIndex;
    private final Path root;
    private final String queryId;

    SafetensorsWrite(WriteOptions options, Configuration conf, boolean collectIndex, Path root, String queryId) {
        this.options = options;
        this.conf = conf;
        this.collectIndex = collectIndex;
        this.root = root;
        this.queryId = queryId;
    }

    @Override
    public String description() {
        return "safetensors[" + root + ", " + options.saveMode + ", "
                + (options.mode == WriteOptions.Mode.KV ? "name_col=" + options.nameCol
                        : "batch_size=" + options.batchSize)
                + ", columns=" + options.columns.stream().map(ColumnSpec::name).toList() + "]";
    }

    @Override
    public BatchWrite toBatch() {
        Broadcast<SerializableConfiguration> b = SparkHadoopConfs.broadcast(SparkSession.active(), conf);
        // One staging directory per job; the query id ties it to the query in the UI and logs.
        String jobId = queryId + "-" + UUID.randomUUID();
        return new SafetensorsBatchWrite(options, conf, b, collectIndex, root, jobId);
    }
}
