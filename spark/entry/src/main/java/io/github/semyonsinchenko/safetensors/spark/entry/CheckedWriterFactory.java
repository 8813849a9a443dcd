package io.github.semyonsinchenko.safetensors.spark.entry;

import java.io.IOException;
import java.io.ObjectInputStream;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;

/**
 * The writer factory as sent to executors: checks the executor's Java while being deserialized
 * (see {@link CheckedInputPartition}), then delegates.
 */
public final class CheckedWriterFactory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;

    /** The real factory; typed by Spark's interface so that loading this class loads none of ours. */
    @SuppressWarnings("serial") // every DataWriterFactory is Serializable
    private final DataWriterFactory delegate;

    /**
     * Wraps a factory.
     *
     * @param delegate the real factory
     */
    public CheckedWriterFactory(DataWriterFactory delegate) {
        this.delegate = delegate;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
        return delegate.createWriter(partitionId, taskId);
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
