/**
 * The connector's DataSource V2 implementation behind {@code format("safetensors")}:
 * {@link io.github.semyonsinchenko.safetensors.spark.SafetensorsTableProvider} and
 * {@link io.github.semyonsinchenko.safetensors.spark.SafetensorsTable} only wire the read side
 * ({@code spark.read}) and the write side ({@code spark.write}) together. Spark reaches them through
 * the entry classes, which check for JDK 25 first; users name the format, never these classes.
 */
package io.github.semyonsinchenko.safetensors.spark;
