/**
 * headwater's on-disk database format, in one home: its layout and named rules
 * ({@link io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout},
 * {@link io.github.semyonsinchenko.safetensors.sampler.db.DatabaseRule}), {@code metadata.json}
 * ({@link io.github.semyonsinchenko.safetensors.sampler.db.MetadataJson}), the checked read-only
 * mapping of a database ({@link io.github.semyonsinchenko.safetensors.sampler.db.Database}) and the
 * one writer of the format ({@link io.github.semyonsinchenko.safetensors.sampler.db.DatabaseWriter},
 * {@link io.github.semyonsinchenko.safetensors.sampler.db.SectionWriter}). A corrupt database is one
 * {@link io.github.semyonsinchenko.safetensors.sampler.db.SamplerDatabaseException} naming the file
 * and the rule.
 */
package io.github.semyonsinchenko.safetensors.sampler.db;
