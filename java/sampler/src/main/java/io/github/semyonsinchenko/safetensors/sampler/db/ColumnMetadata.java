package io.github.semyonsinchenko.safetensors.sampler.db;

/** One column of {@code metadata.json}; {@code fkeyTargetCol} is a global column index or -1. */
public record ColumnMetadata(String name, SemanticType stype, int fkeyTargetCol) {}
