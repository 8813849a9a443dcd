package io.github.semyonsinchenko.safetensors.preprocess.partition;

import org.apache.spark.Partitioner;

/**
 * Sends each record to the partition its key names: for pair RDDs whose keys are already target
 * partition numbers (a row range's index, a cell range's index), so no hash spreads them.
 */
public final class IdPartitioner extends Partitioner {
    private static final long serialVersionUID = 1L;
    private final int partitions;

    /** A partitioner of {@code partitions} partitions. */
    public IdPartitioner(int partitions) {
        this.partitions = partitions;
    }

    @Override
    public int numPartitions() {
        return partitions;
    }

    @Override
    public int getPartition(Object key) {
        return (Integer) key;
    }
}
