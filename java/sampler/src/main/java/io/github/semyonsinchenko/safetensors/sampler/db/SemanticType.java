package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * A column's semantic type. {@link #code()} is the value stored in batch tensors
 * ({@code semantic_types}, {@code target_stype}); {@link #jsonName()} is the PascalCase string of
 * {@code metadata.json}.
 */
public enum SemanticType {
    /** A key column (primary or foreign): only whether the cell is present is stored. */
    IDENTIFIER("Identifier"),
    /** A number, stored as its z-score. */
    NUMERICAL("Numerical"),
    /** A point in time, stored as 15 features (cyclic calendar fields and the z-scored epoch time). */
    TIMESTAMP("Timestamp"),
    /** True or false, stored as a bit. */
    BOOLEAN("Boolean"),
    /** One of a column's few distinct values, stored as a global categorical embedding index. */
    CATEGORICAL("Categorical"),
    /** Free text, stored as a global text embedding index. */
    TEXT("Text"),
    /** A column that is neither stored nor sampled. */
    IGNORED("Ignored");

    private static final SemanticType[] VALUES = values();

    private final String jsonName;

    SemanticType(String jsonName) {
        this.jsonName = jsonName;
    }

    /**
     * The numeric code of batch tensors.
     *
     * @return 0 for Identifier to 6 for Ignored, in declaration order
     */
    public int code() {
        return ordinal();
    }

    /**
     * The name {@code metadata.json} uses.
     *
     * @return the PascalCase name, e.g. {@code "Categorical"}
     */
    public String jsonName() {
        return jsonName;
    }

    /**
     * Whether a task's target may have this stype.
     *
     * @return true for Numerical, Timestamp, Boolean and Categorical
     */
    public boolean isTaskTarget() {
        return this == NUMERICAL || this == TIMESTAMP || this == BOOLEAN || this == CATEGORICAL;
    }

    /**
     * The stype called {@code name} in {@code metadata.json}.
     *
     * @param name the exact PascalCase name
     * @return the stype, or null if the name is unknown
     */
    public static SemanticType ofJsonName(String name) {
        for (SemanticType t : VALUES) {
            if (t.jsonName.equals(name)) {
                return t;
            }
        }
        return null;
    }
}
