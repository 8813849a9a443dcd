package io.github.semyonsinchenko.safetensors.spark.entry;

import java.io.IOException;
import java.io.ObjectInputStream;
import org.apache.spark.sql.connector.read.InputPartition;

/**
 * An input partition as sent to executors: an executor below JDK 25 fails while deserializing it,
 * with {@link EntryCheck#requireOnExecutor}'s message, before it loads any JDK 25 class (Spark
 * deserializes a task's partition before the rest of the task). Not a record: deserializing a
 * record reads its fields before any code of it runs.
 */
public final class CheckedInputPartition implements InputPartition {
    private static final long serialVersionUID = 1L;

    /** The real partition; typed by Spark's interface so that loading this class loads none of ours. */
    @SuppressWarnings("serial") // every InputPartition is Serializable
    private final InputPartition delegate;

    /**
     * Wraps a partition.
     *
     * @param delegate the real partition
     */
    public CheckedInputPartition(InputPartition delegate) {
        this.delegate = delegate;
    }

    /**
     * The real partition.
     *
     * @return the partition this one wraps
     */
    public InputPartition delegate() {
        return delegate;
    }

    @Override
    public String[] preferredLocations() {
        return delegate.preferredLocations();
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
