package io.github.semyonsinchenko.safetensors.spark.write;

import java.io.Serial;
import java.io.Serializable;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * What a committed task reports to the driver: the shards it left in its staging directory, the
 * per-sample dtype and shape it saw for each column, and (when an index is wanted) one entry per
 * tensor. Only messages of attempts Spark let commit reach {@code BatchWrite.commit}.
 */
record ShardCommitMessage(int partitionId, long taskId, String stagingDir, List<Shard> shards,
                          Map<String, ColumnSchema> schema, List<IndexEntry> index)
        implements WriterCommitMessage {
    @Serial
    private static final long serialVersionUID = 1L;

    /** One shard file: its name (same in staging and at the root), samples and size in bytes. */
    record Shard(String file, long samples, long bytes) implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;
    }

    /** A column's per-sample dtype and shape (batch mode: without the batch dimension). */
    record ColumnSchema(String dtype, long[] shape) implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;

        boolean sameAs(ColumnSchema o) {
            return dtype.equals(o.dtype) && java.util.Arrays.equals(shape, o.shape);
        }

        @Override
        public String toString() {
            return dtype + " " + java.util.Arrays.toString(shape);
        }
    }

    /** One row of {@code _tensor_index.parquet} (see DATASET.md). */
    record IndexEntry(String tensorKey, String column, String tensorName, String fileName, long[] shape,
                      String dtype, long begin, long end) implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;
    }
}
