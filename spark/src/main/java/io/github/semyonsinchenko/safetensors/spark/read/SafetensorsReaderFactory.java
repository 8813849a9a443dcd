package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;
import org.apache.spark.util.TaskCompletionListener;

/**
 * The only object sent to executors: the broadcast Hadoop configuration, the dataset's layout, the
 * schema to emit and the header-decidable filter. No session, no open file, no arena.
 */
public final class SafetensorsReaderFactory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    /** The Hadoop configuration, broadcast once per scan. */
    private final Broadcast<SerializableConfiguration> conf;
    /** The dataset's layout and naming rules, without its file list. */
    private final ResolvedDataset dataset;
    /** The table's tensor columns, in schema order. */
    @SuppressWarnings("serial") // always a List.copyOf, which serializes
    private final List<String> wideColumns;
    /** The schema each row is emitted in. */
    private final StructType readSchema;
    /** The parsed read options. */
    private final ReadOptions options;
    /** The pushed filter decided from headers alone. */
    private final MetaFilter filter;

    SafetensorsReaderFactory(Broadcast<SerializableConfiguration> conf, ResolvedDataset dataset, StructType tableSchema,
                             StructType readSchema, ReadOptions options, MetaFilter filter) {
        this.conf = conf;
        // The dataset's file list stays on the driver: each partition carries its own file.
        this.dataset = dataset.forExecutors();
        List<String> cols = new ArrayList<>();
        for (StructField f : tableSchema.fields()) {
            if (TensorStruct.is(f.dataType())) {
                cols.add(f.name());
            }
        }
        this.wideColumns = List.copyOf(cols);
        this.readSchema = readSchema;
        this.options = options;
        this.filter = filter;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        SafetensorsInputPartition p = (SafetensorsInputPartition) partition;
        SafetensorsPartitionReader reader = new SafetensorsPartitionReader(p.file(), conf.value().value(), dataset,
                wideColumns, readSchema, options, filter);
        TaskContext ctx = TaskContext.get();
        if (ctx != null) {
            // Closed even if the task is killed before Spark's own close; close() is idempotent.
            ctx.addTaskCompletionListener((TaskCompletionListener) c -> reader.close());
        }
        return reader;
    }
}
