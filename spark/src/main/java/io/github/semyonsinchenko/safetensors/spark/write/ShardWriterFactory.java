package io.github.semyonsinchenko.safetensors.spark.write;

import java.io.Serial;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.util.SerializableConfiguration;

/**
 * The only object shipped to executors: the validated options, the job's staging directory and
 * the broadcast Hadoop configuration. No SparkSession, no open files.
 */
final class ShardWriterFactory implements DataWriterFactory {
    @Serial
    private static final long serialVersionUID = 1L;

    private final WriteOptions options;
    private final String jobStagingDir;
    private final boolean collectIndex;
    private final Broadcast<SerializableConfiguration> conf;

    ShardWriterFactory(WriteOptions options, String jobStagingDir, boolean collectIndex,
                       Broadcast<SerializableConfiguration> conf) {
        this.options = options;
        this.jobStagingDir = jobStagingDir;
        this.collectIndex = collectIndex;
        this.conf = conf;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
        return new ShardDataWriter(options, jobStagingDir, collectIndex, conf.value().value(), partitionId, taskId);
    }
}
