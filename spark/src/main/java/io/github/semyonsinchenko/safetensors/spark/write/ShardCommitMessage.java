package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.dataset.ColumnSchema;
import io.github.semyonsinchenko.safetensors.dataset.IndexEntry;
import io.github.semyonsinchenko.safetensors.dataset.Shard;
import java.io.Serial;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * What a committed task reports to the driver: the shards it left in its staging directory, the
 * per-sample dtype and shape it saw for each column, and (when an index is wanted) one entry per
 * tensor. Only messages of attempts Spark let commit reach {@code BatchWrite.commit}.
 *
 * @param partitionId the task's partition
 * @param taskId the task attempt's id
 * @param stagingDir the attempt's staging directory, holding its shards
 * @param shards the shards written, named relative to the staging directory
 * @param schema each column's per-sample dtype and shape, as the task saw them
 * @param index one entry per tensor written (empty when no index is wanted)
 */
record ShardCommitMessage(int partitionId, long taskId, String stagingDir, List<Shard> shards,
                          Map<String, ColumnSchema> schema, List<IndexEntry> index)
        implements WriterCommitMessage {
    @Serial
    private static final long serialVersionUID = 1L;
}
