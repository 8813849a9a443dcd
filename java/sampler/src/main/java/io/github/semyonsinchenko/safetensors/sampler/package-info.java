/**
 * headwater's relational sampler on the JVM: {@link io.github.semyonsinchenko.safetensors.sampler.Sampler}
 * opens a database, assigns seeds to splits and ranks, and hands out training and validation
 * {@link io.github.semyonsinchenko.safetensors.sampler.Batch}es that equal the reference's bit for bit,
 * built ahead on producer threads into pooled native memory.
 * {@link io.github.semyonsinchenko.safetensors.sampler.BatchBuilder} builds the same batches
 * synchronously; {@link io.github.semyonsinchenko.safetensors.sampler.SamplerConfig} holds the
 * settings. The database format itself lives in {@code sampler.db}.
 */
package io.github.semyonsinchenko.safetensors.sampler;
