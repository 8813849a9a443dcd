package io.github.semyonsinchenko.safetensors.sampler.db;

import java.util.List;

/**
 * Per-column (and per-task target) statistics of {@code metadata.json}: one record per variant.
 * Counts are unsigned 64-bit values held in a {@code long}. A {@code null} f64 in the JSON (the
 * reference writes non-finite values that way) is read as NaN.
 */
public sealed interface ColumnStats {

    /** The stype this variant describes. */
    SemanticType stype();

    /** The {@code num_nulls} field; 0 for {@link Ignored}. */
    long numNulls();

    record Identifier(long numNulls) implements ColumnStats {
        @Override
        public SemanticType stype() {
            return SemanticType.IDENTIFIER;
        }
    }

    record Numerical(long numNulls, double min, double max, double mean, double std) implements ColumnStats {
        @Override
        public SemanticType stype() {
            return SemanticType.NUMERICAL;
        }
    }

    record Timestamp(long numNulls, long minUs, long maxUs, double meanUs, double stdUs) implements ColumnStats {
        @Override
        public SemanticType stype() {
            return SemanticType.TIMESTAMP;
        }
    }

    record Boolean(long numNulls, long numTrue, long numFalse) implements ColumnStats {
        @Override
        public SemanticType stype() {
            return SemanticType.BOOLEAN;
        }
    }

    /** {@code categories} sorted and distinct; {@code catEmbStart} indexes {@code categorical_embeddings.bin}. */
    record Categorical(long numNulls, List<String> categories, int catEmbStart) implements ColumnStats {
        public Categorical {
            categories = List.copyOf(categories);
        }

        @Override
        public SemanticType stype() {
            return SemanticType.CATEGORICAL;
        }
    }

    record Text(long numNulls) implements ColumnStats {
        @Override
        public SemanticType stype() {
            return SemanticType.TEXT;
        }
    }

    /** Serialized as the bare string {@code "Ignored"}. */
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
