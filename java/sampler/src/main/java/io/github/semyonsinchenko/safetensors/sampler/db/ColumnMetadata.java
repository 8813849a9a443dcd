package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * One column of {@code metadata.json}.
 *
 * @param name the column's name in its table
 * @param stype how its values are encoded
 * @param fkeyTargetCol for a foreign key, the global index of the column it references; otherwise -1
 */
public record ColumnMetadata(String name, SemanticType stype, int fkeyTargetCol) {}
