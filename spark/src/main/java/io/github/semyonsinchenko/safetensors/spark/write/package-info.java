/**
 * The write side of {@code format("safetensors")}: options checked on the driver before any task
 * runs, tasks writing shards into a staging directory, and the driver committing them into the
 * dataset's manifest and tensor index (or aborting and deleting the staging directory). Every
 * SaveMode goes through {@link io.github.semyonsinchenko.safetensors.spark.write.SaveModeWrite} to
 * the one DataSource V2 write.
 */
package io.github.semyonsinchenko.safetensors.spark.write;
