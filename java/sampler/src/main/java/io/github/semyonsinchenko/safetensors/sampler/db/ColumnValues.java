package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * One column's (or one task target's) encoded values, ready for {@link DatabaseWriter}: what a
 * preprocessor hands over after computing z-scores, timestamp features and embedding indices.
 * Arrays hold one entry per row ({@code features}: 15 per row). Values of null cells are ignored:
 * the writer stores 0 there, as the format requires.
 */
public sealed interface ColumnValues {

    SemanticType stype();

    /** Rows described. */
    int rows();

    /** Identifier: only the presence bit (1 = the source value was not null). */
    record Identifier(boolean[] present) implements ColumnValues {
        @Override
        public SemanticType stype() {
            return SemanticType.IDENTIFIER;
        }

        @Override
        public int rows() {
            return present.length;
        }
    }

    /** Numerical: z-scores ({@link ValueEncoding#zScore}). */
    record Numerical(boolean[] valid, float[] values) implements ColumnValues {
        @Override
        public SemanticType stype() {
            return SemanticType.NUMERICAL;
        }

        @Override
        public int rows() {
            return valid.length;
        }
    }

    /** Timestamp: 15 features per row ({@link ValueEncoding#timestampFeatures}), row-major. */
    record Timestamp(boolean[] valid, float[] features) implements ColumnValues {
        @Override
        public SemanticType stype() {
            return SemanticType.TIMESTAMP;
        }

        @Override
        public int rows() {
            return valid.length;
        }
    }

    record Bool(boolean[] valid, boolean[] values) implements ColumnValues {
        @Override
        public SemanticType stype() {
            return SemanticType.BOOLEAN;
        }

        @Override
        public int rows() {
            return valid.length;
        }
    }

    /** Categorical or Text: global embedding indices. */
    record Indexed(SemanticType stype, boolean[] valid, int[] indices) implements ColumnValues {
        public Indexed {
            if (stype != SemanticType.CATEGORICAL && stype != SemanticType.TEXT) {
                throw new IllegalArgumentException("indexed values are Categorical or Text, not " + stype);
            }
        }

        @Override
        public int rows() {
            return valid.length;
        }
    }

    /** Ignored: nothing is stored. */
    record Ignored(int rows) implements ColumnValues {
        @Override
        public SemanticType stype() {
            return SemanticType.IGNORED;
        }
    }
}
