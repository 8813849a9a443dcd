package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * One task of {@code metadata.json}: seeds are rows of {@code anchorTable}; the target has
 * {@code targetStype} (Numerical, Timestamp, Boolean or Categorical) and {@code targetStats}
 * computed over this task's seeds.
 *
 * @param name the task's name, also its file's name
 * @param anchorTable the index of the table its seeds are rows of
 * @param targetStype the target's semantic type
 * @param numSeeds the number of seeds in its file
 * @param targetStats the target's statistics over this task's seeds
 */
public record TaskMetadata(String name, int anchorTable, SemanticType targetStype, int numSeeds,
        ColumnStats targetStats) {}
