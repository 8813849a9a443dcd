/**
 * The SQL functions {@code arr_to_st}, {@code st_to_array} and {@code st_convert}: their names,
 * argument checks at analysis, and per-row work compiled into Spark's generated code. Registered by
 * the session extension {@code io.github.semyonsinchenko.safetensors.SafetensorsExtensions}.
 */
package io.github.semyonsinchenko.safetensors.spark.functions;
