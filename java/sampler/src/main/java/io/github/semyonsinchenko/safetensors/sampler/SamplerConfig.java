package io.github.semyonsinchenko.safetensors.sampler;

import java.util.Locale;

/**
 * Sampler settings, with the reference's defaults (rank 0 of 1, split ratios 0.8/0.1/0.1,
 * split_seed 123, seed 42, num_prefetch 3, batch 32, sequence length 1024, bfs_child_width 16,
 * max_rows_per_seq 200). Built and validated by {@link #builder()}; immutable.
 *
 * @param rank this process's rank, in {@code [0, worldSize)}; it samples every
 *     {@code worldSize}-th seed of each split
 * @param worldSize the number of ranks sharing the seeds, at least 1
 * @param trainRatio the share of seeds in the training split (with {@code valRatio}, compared
 *     against a hash bucket in {@code [0, 1000)})
 * @param valRatio the share of seeds in the validation split
 * @param testRatio the share of seeds in the test split (never sampled; plays no part in the
 *     assignment)
 * @param splitSeed the key of the hash that assigns seeds to splits
 * @param seed the seed of the random walks; equal settings give equal batches
 * @param numPrefetch training batches built ahead of the consumer, at least 0 (0: each is built
 *     when asked for)
 * @param batchSize sequences per batch ({@code B}), at least 1
 * @param sequenceLength cells per sequence ({@code S}), in {@code [1, 65535]}
 * @param bfsChildWidth the most children of one visited row queued (a random subset when more pass
 *     the time filter), at least 0
 * @param maxRowsPerSeq the most rows in one sequence ({@code R}), in {@code [1, 65536]}
 * @param threads workers building the sequences of one batch (default: available processors);
 *     batches do not depend on it
 * @param emitCategoricalRange also emit {@code cat_emb_start}/{@code cat_emb_count} (opt-in; the
 *     reference does not)
 */
public record SamplerConfig(int rank, int worldSize, float trainRatio, float valRatio, float testRatio,
        long splitSeed, long seed, int numPrefetch, int batchSize, int sequenceLength, int bfsChildWidth,
        int maxRowsPerSeq, int threads, boolean emitCategoricalRange) {

    /** Positions are u16 in the batch, so a sequence holds at most 65,535 cells. */
    public static final int MAX_SEQUENCE_LENGTH = 65_535;
    /** Row ids are u16 in the batch. */
    public static final int MAX_ROWS_PER_SEQ = 65_536;

    /**
     * Checks the settings.
     *
     * @throws IllegalArgumentException naming the setting and its range when one is out of range, or
     *     when a batch tensor would exceed 2^31 bytes
     */
    public SamplerConfig {
        check(worldSize >= 1, "world_size must be at least 1, got %d", worldSize);
        check(rank >= 0 && rank < worldSize, "rank must be in [0, world_size=%d), got %d", worldSize, rank);
        check(Float.isFinite(trainRatio) && Float.isFinite(valRatio) && Float.isFinite(testRatio),
                "split ratios must be finite, got (%s, %s, %s)", trainRatio, valRatio, testRatio);
        check(numPrefetch >= 0, "num_prefetch must be >= 0, got %d", numPrefetch);
        check(batchSize >= 1, "batch_size must be >= 1, got %d", batchSize);
        check(sequenceLength >= 1 && sequenceLength <= MAX_SEQUENCE_LENGTH,
                "sequence_length must be in [1, %d] (positions are u16), got %d", MAX_SEQUENCE_LENGTH,
                sequenceLength);
        check(maxRowsPerSeq >= 1 && maxRowsPerSeq <= MAX_ROWS_PER_SEQ,
                "max_rows_per_seq must be in [1, %d] (row ids are u16), got %d", MAX_ROWS_PER_SEQ, maxRowsPerSeq);
        check(bfsChildWidth >= 0, "bfs_child_width must be >= 0, got %d", bfsChildWidth);
        check(threads >= 1, "threads must be >= 1, got %d", threads);
        // fk_adj is [B, R, R] bytes in one segment; keep every batch tensor addressable.
        check((long) batchSize * maxRowsPerSeq * maxRowsPerSeq <= Integer.MAX_VALUE
                && (long) batchSize * sequenceLength * 60 <= Integer.MAX_VALUE,
                "batch_size * max_rows_per_seq^2 and batch_size * sequence_length * 60 must stay below 2^31"
                        + " bytes (B=%d, S=%d, R=%d)", batchSize, sequenceLength, maxRowsPerSeq);
    }

    private static void check(boolean ok, String format, Object... args) {
        if (!ok) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, format, args));
        }
    }

    /**
     * A builder starting from the reference's defaults.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder starting from these settings.
     *
     * @return a new builder holding these settings
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.rank = rank;
        b.worldSize = worldSize;
        b.trainRatio = trainRatio;
        b.valRatio = valRatio;
        b.testRatio = testRatio;
        b.splitSeed = splitSeed;
        b.seed = seed;
        b.numPrefetch = numPrefetch;
        b.batchSize = batchSize;
        b.sequenceLength = sequenceLength;
        b.bfsChildWidth = bfsChildWidth;
        b.maxRowsPerSeq = maxRowsPerSeq;
        b.threads = threads;
        b.emitCategoricalRange = emitCategoricalRange;
        return b;
    }

    /** Settings builder; {@link #build()} validates. Not thread-safe. */
    public static final class Builder {
        private int rank = 0;
        private int worldSize = 1;
        private float trainRatio = 0.8f;
        private float valRatio = 0.1f;
        private float testRatio = 0.1f;
        private long splitSeed = 123;
        private long seed = 42;
        private int numPrefetch = 3;
        private int batchSize = 32;
        private int sequenceLength = 1024;
        private int bfsChildWidth = 16;
        private int maxRowsPerSeq = 200;
        private int threads = Runtime.getRuntime().availableProcessors();
        private boolean emitCategoricalRange = false;

        private Builder() {}

        /**
         * Sets this process's rank among {@code worldSize} ranks (default 0 of 1).
         *
         * @param rank this process's rank, in {@code [0, worldSize)}
         * @param worldSize the number of ranks, at least 1
         * @return this builder
         */
        public Builder rank(int rank, int worldSize) {
            this.rank = rank;
            this.worldSize = worldSize;
            return this;
        }

        /**
         * Sets the split ratios (default 0.8/0.1/0.1); they need not sum to 1.
         *
         * @param train the training share
         * @param val the validation share
         * @param test the test share
         * @return this builder
         */
        public Builder splitRatios(float train, float val, float test) {
            this.trainRatio = train;
            this.valRatio = val;
            this.testRatio = test;
            return this;
        }

        /**
         * Sets the key of the split assignment (default 123).
         *
         * @param splitSeed the hash key
         * @return this builder
         */
        public Builder splitSeed(long splitSeed) {
            this.splitSeed = splitSeed;
            return this;
        }

        /**
         * Sets the seed of the random walks (default 42).
         *
         * @param seed the seed
         * @return this builder
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * Sets how many training batches are built ahead (default 3).
         *
         * @param numPrefetch at least 0
         * @return this builder
         */
        public Builder numPrefetch(int numPrefetch) {
            this.numPrefetch = numPrefetch;
            return this;
        }

        /**
         * Sets the sequences per batch (default 32).
         *
         * @param batchSize at least 1
         * @return this builder
         */
        public Builder batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        /**
         * Sets the cells per sequence (default 1024).
         *
         * @param sequenceLength in {@code [1, 65535]}
         * @return this builder
         */
        public Builder sequenceLength(int sequenceLength) {
            this.sequenceLength = sequenceLength;
            return this;
        }

        /**
         * Sets the most children of one visited row queued by the walk (default 16).
         *
         * @param bfsChildWidth at least 0
         * @return this builder
         */
        public Builder bfsChildWidth(int bfsChildWidth) {
            this.bfsChildWidth = bfsChildWidth;
            return this;
        }

        /**
         * Sets the most rows in one sequence (default 200).
         *
         * @param maxRowsPerSeq in {@code [1, 65536]}
         * @return this builder
         */
        public Builder maxRowsPerSeq(int maxRowsPerSeq) {
            this.maxRowsPerSeq = maxRowsPerSeq;
            return this;
        }

        /**
         * Sets the workers building one batch's sequences (default: available processors); batches do
         * not depend on it.
         *
         * @param threads at least 1
         * @return this builder
         */
        public Builder threads(int threads) {
            this.threads = threads;
            return this;
        }

        /**
         * Also emits {@code cat_emb_start}/{@code cat_emb_count} (default off, as the reference).
         *
         * @param emit whether to emit them
         * @return this builder
         */
        public Builder emitCategoricalRange(boolean emit) {
            this.emitCategoricalRange = emit;
            return this;
        }

        /**
         * Validates and builds the settings.
         *
         * @return the settings
         * @throws IllegalArgumentException naming the first setting out of range
         */
        public SamplerConfig build() {
            return new SamplerConfig(rank, worldSize, trainRatio, valRatio, testRatio, splitSeed, seed, numPrefetch,
                    batchSize, sequenceLength, bfsChildWidth, maxRowsPerSeq, threads, emitCategoricalRange);
        }
    }
}
