package io.github.semyonsinchenko.safetensors.sampler;

import java.util.Locale;

/**
 * Sampler settings, with the reference's defaults (rank 0 of 1, split ratios 0.8/0.1/0.1,
 * split_seed 123, seed 42, num_prefetch 3, batch 32, sequence length 1024, bfs_child_width 16,
 * max_rows_per_seq 200). Built and validated by {@link #builder()}; immutable.
 *
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

    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from these settings. */
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

    /** Settings builder; {@link #build()} validates. */
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

        public Builder rank(int rank, int worldSize) {
            this.rank = rank;
            this.worldSize = worldSize;
            return this;
        }

        public Builder splitRatios(float train, float val, float test) {
            this.trainRatio = train;
            this.valRatio = val;
            this.testRatio = test;
            return this;
        }

        public Builder splitSeed(long splitSeed) {
            this.splitSeed = splitSeed;
            return this;
        }

        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        public Builder numPrefetch(int numPrefetch) {
            this.numPrefetch = numPrefetch;
            return this;
        }

        public Builder batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        public Builder sequenceLength(int sequenceLength) {
            this.sequenceLength = sequenceLength;
            return this;
        }

        public Builder bfsChildWidth(int bfsChildWidth) {
            this.bfsChildWidth = bfsChildWidth;
            return this;
        }

        public Builder maxRowsPerSeq(int maxRowsPerSeq) {
            this.maxRowsPerSeq = maxRowsPerSeq;
            return this;
        }

        public Builder threads(int threads) {
            this.threads = threads;
            return this;
        }

        public Builder emitCategoricalRange(boolean emit) {
            this.emitCategoricalRange = emit;
            return this;
        }

        public SamplerConfig build() {
            return new SamplerConfig(rank, worldSize, trainRatio, valRatio, testRatio, splitSeed, seed, numPrefetch,
                    batchSize, sequenceLength, bfsChildWidth, maxRowsPerSeq, threads, emitCategoricalRange);
        }
    }
}
