package io.github.semyonsinchenko.safetensors.dataset;

import java.io.Serial;
import java.io.Serializable;

/**
 * How a dataset lays samples out as tensors (format/dataset.md, "Modes"): the mode and its options,
 * as the manifest records them and every shard's {@code __metadata__} repeats them.
 *
 * @param writeMode {@link #BATCH}, {@link #KV}, or null for a dataset whose manifest records none
 *     (the original connector's)
 * @param batchSize batch mode: rows per batch (else null)
 * @param tailStrategy batch mode: {@code write}, {@code drop} or {@code pad} (else null)
 * @param packBatches batch mode: several batches per file (else null)
 * @param nameCol kv mode: the column that named the tensors (else null)
 * @param kvSeparator kv mode: tensors are {@code <key><kvSeparator><column>}; null in a kv dataset of
 *     an earlier version ({@link TensorNames#parseKv})
 */
public record Layout(String writeMode, Integer batchSize, String tailStrategy, Boolean packBatches, String nameCol,
                     String kvSeparator) implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;

    /** {@code write_mode} of batch datasets. */
    public static final String BATCH = "batch";
    /** {@code write_mode} of kv datasets. */
    public static final String KV = "kv";

    /**
     * A batch layout.
     *
     * @param batchSize rows per batch
     * @param tailStrategy {@code write}, {@code drop} or {@code pad}
     * @param packBatches several batches per file
     * @return the layout
     */
    public static Layout batch(int batchSize, String tailStrategy, boolean packBatches) {
        return new Layout(BATCH, batchSize, tailStrategy, packBatches, null, null);
    }

    /**
     * A kv layout.
     *
     * @param nameCol the column whose value names the tensors
     * @param kvSeparator the separator between key and column in tensor names
     * @return the layout
     */
    public static Layout kv(String nameCol, String kvSeparator) {
        return new Layout(KV, null, null, null, nameCol, kvSeparator);
    }

    /** A layout of a dataset whose manifest records no write mode (the original connector's). */
    public static final Layout UNRECORDED = new Layout(null, null, null, null, null, null);

    /** {@return whether this is batch mode} */
    public boolean isBatch() {
        return BATCH.equals(writeMode);
    }

    /** {@return whether this is kv mode} */
    public boolean isKv() {
        return KV.equals(writeMode);
    }
}
