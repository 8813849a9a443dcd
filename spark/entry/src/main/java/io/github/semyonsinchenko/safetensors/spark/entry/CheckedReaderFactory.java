package io.github.semyonsinchenko.safetensors.spark.entry;

import java.io.IOException;
import java.io.ObjectInputStream;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The reader factory as sent to executors: checks the executor's Java while being deserialized
 * (see {@link CheckedInputPartition}), then hands the real factory the real partitions.
 */
public final class CheckedReaderFactory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    /** The real factory; typed by Spark's interface so that loading this class loads none of ours. */
    @SuppressWarnings("serial") // every PartitionReaderFactory is Serializable
    private final PartitionReaderFactory delegate;

    /**
     * Wraps a factory.
     *
     * @param delegate the real factory
     */
    public CheckedReaderFactory(PartitionReaderFactory delegate) {
        this.delegate = delegate;
    }

    private static InputPartition unwrap(InputPartition partition) {
        return partition instanceof CheckedInputPartition checked ? checked.delegate() : partition;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        return delegate.createReader(unwrap(partition));
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
        return delegate.createColumnarReader(unwrap(partition));
    }

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
        return delegate.supportColumnarReads(unwrap(partition));
    }

    /**
     * Checks this executor's Java before anything of the delegate is read.
     *
     * @param in the stream
     * @throws IOException as {@link ObjectInputStream#defaultReadObject()}
     * @throws ClassNotFoundException as {@link ObjectInputStream#defaultReadObject()}
     */
    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        EntryCheck.requireOnExecutor();
        in.defaultReadObject();
    }
}
