package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * One column's (or one task target's) encoded values, ready for {@link DatabaseWriter}: what a
 * preprocessor hands over after computing z-scores, timestamp features and embedding indices.
 * Arrays hold one entry per row ({@code features}: 15 per row). Values of null cells are ignored:
 * the writer stores 0 there, as the format requires.
 */
public sealed interface ColumnValues {

    /**
     * The stype the values are encoded for.
     *
     * @return the semantic type
     */
    SemanticType stype();

    /**
     * Rows described.
     *
     * @return the number of rows
     */
    int rows();

    /**
     * Identifier: only the presence bit.
     *
     * @param present per row, true when the source value was not null
     */
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

    /**
     * Numerical: z-scores ({@link ValueEncoding#zScore}).
     *
     * @param valid per row, true when the value is not null
     * @param values per row, the z-score
     */
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

    /**
     * Timestamp: 15 features per row ({@link ValueEncoding#timestampFeatures}), row-major.
     *
     * @param valid per row, true when the value is not null
     * @param features 15 features per row
     */
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

    /**
     * Boolean values.
     *
     * @param valid per row, true when the value is not null
     * @param values per row, the value
     */
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

    /**
     * Categorical or Text: global embedding indices.
     *
     * @param stype {@link SemanticType#CATEGORICAL} or {@link SemanticType#TEXT}
     * @param valid per row, true when the value is not null
     * @param indices per row, the global row of the categorical or text embeddings
     */
    record Indexed(SemanticType stype, boolean[] valid, int[] indices) implements ColumnValues {
        /**
         * Checks the stype.
         *
         * @throws IllegalArgumentException if the stype is neither categorical nor text
         */
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

    /**
     * Ignored: nothing is stored.
     *
     * @param rows the number of rows
     */
    record Ignored(int rows) implements ColumnValues {
        @Override
        public SemanticType stype() {
            return SemanticType.IGNORED;
        }
    }
}
