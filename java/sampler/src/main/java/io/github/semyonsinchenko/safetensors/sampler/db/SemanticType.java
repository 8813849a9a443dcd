package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * A column's semantic type. {@link #code()} is the value stored in batch tensors
 * ({@code semantic_types}, {@code target_stype}); {@link #jsonName()} is the PascalCase string of
 * {@code metadata.json}.
 */
public enum SemanticType {
    IDENTIFIER("Identifier"),
    NUMERICAL("Numerical"),
    TIMESTAMP("Timestamp"),
    BOOLEAN("Boolean"),
    CATEGORICAL("Categorical"),
    TEXT("Text"),
    IGNORED("Ignored");

    private static final SemanticType[] VALUES = values();

    private final String jsonName;

    SemanticType(String jsonName) {
        this.jsonName = jsonName;
    }

    /** The numeric code of batch tensors (0 = Identifier ... 6 = Ignored). */
    public int code() {
        return ordinal();
    }

    public String jsonName() {
        return jsonName;
    }

    /** True for the stypes a task target may have (Numerical, Timestamp, Boolean, Categorical). */
    public boolean isTaskTarget() {
        return this == NUMERICAL || this == TIMESTAMP || this == BOOLEAN || this == CATEGORICAL;
    }

    /** The stype called {@code name} in {@code metadata.json} (exact PascalCase), or null. */
    public static SemanticType ofJsonName(String name) {
        for (SemanticType t : VALUES) {
            if (t.jsonName.equals(name)) {
                return t;
            }
        }
        return null;
    }
}
