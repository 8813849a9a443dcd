package io.github.semyonsinchenko.safetensors.sampler.db;

import java.util.List;

/**
 * Per-column (and per-task target) statistics of {@code metadata.json}: one record per variant.
 * Counts are unsigned 64-bit values held in a {@code long}. A {@code null} f64 in the JSON (the
 * reference writes non-finite values that way) is read as NaN.
 */
public sealed interface ColumnStats {

    /**
     * The stype this variant describes.
     *
     * @return the variant's semantic type
     */
    SemanticType stype();

    /**
     * The {@code num_nulls} field; 0 for {@link Ignored}.
     *
     * @return the number of null cells
     */
    long numNulls();

    /**
     * Statistics of an identifier column.
     *
     * @param numNulls the number of null cells
     */
    record Identifier(long numNulls) implements ColumnStats {
        @Override
        public SemanticType stype() {
            return SemanticType.IDENTIFIER;
        }
    }

    /**
     * Statistics of a numerical column, over its non-null values.
     *
     * @param numNulls the number of null cells
     * @param min the smallest value
     * @param max the largest value
     * @param mean the mean, which the z-scores subtract
     * @param std the standard deviation, which the z-scores divide by
     */
    record Numerical(long numNulls, double min, double max, double mean, double std) implements ColumnStats {
        @Override
        public SemanticType stype() {
            return SemanticType.NUMERICAL;
        }
    }

    /**
     * Statistics of a timestamp column, over its non-null values, in epoch microseconds.
     *
     * @param numNulls the number of null cells
     * @param minUs the earliest time
     * @param maxUs the latest time
     * @param meanUs the mean time
     * @param stdUs the standard deviation
     */
    record Timestamp(long numNulls, long minUs, long maxUs, double meanUs, double stdUs) implements ColumnStats {
        @Override
        public SemanticType stype() {
            return SemanticType.TIMESTAMP;
        }
    }

    /**
     * Statistics of a boolean column.
     *
     * @param numNulls the number of null cells
     * @param numTrue the number of true cells
     * @param numFalse the number of false cells
     */
    record Boolean(long numNulls, long numTrue, long numFalse) implements ColumnStats {
        @Override
        public SemanticType stype() {
            return SemanticType.BOOLEAN;
        }
    }

    /**
     * Statistics of a categorical column.
     *
     * @param numNulls the number of null cells
     * @param categories its distinct values, sorted (copied)
     * @param catEmbStart the row of {@code categorical_embeddings.bin} holding the first category's
     *     embedding; the others follow in order
     */
    record Categorical(long numNulls, List<String> categories, int catEmbStart) implements ColumnStats {
        /** Copies the categories. */
        public Categorical {
            categories = List.copyOf(categories);
        }

        @Override
        public SemanticType stype() {
            return SemanticType.CATEGORICAL;
        }
    }

    /**
     * Statistics of a text column.
     *
     * @param numNulls the number of null cells
     */
    record Text(long numNulls) implements ColumnStats {
        @Override
        public SemanticType stype() {
            return SemanticType.TEXT;
        }
    }

    /** An ignored column, serialized as the bare string {@code "Ignored"}; it has no statistics. */
    record Ignored() implements ColumnStats {
        @Override
        public SemanticType stype() {
            return SemanticType.IGNORED;
        }

        @Override
        public long numNulls() {
            return 0;
        }
    }
}
