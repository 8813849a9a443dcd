package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * One task of {@code metadata.json}: seeds are rows of {@code anchorTable}; the target has
 * {@code targetStype} (Numerical, Timestamp, Boolean or Categorical) and {@code targetStats}
 * computed over this task's seeds.
 */
public record TaskMetadata(String name, int anchorTable, SemanticType targetStype, int numSeeds,
        ColumnStats targetStats) {}
