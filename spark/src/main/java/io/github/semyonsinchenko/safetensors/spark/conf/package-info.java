/**
 * The connector's two configuration mechanisms, one home each: option parsing for reads and writes
 * ({@link io.github.semyonsinchenko.safetensors.spark.conf.SparkOptions}, strict: an unknown option
 * fails before any task runs) and the Hadoop configuration shipped to executors
 * ({@link io.github.semyonsinchenko.safetensors.spark.conf.SparkHadoopConfs}).
 */
package io.github.semyonsinchenko.safetensors.spark.conf;
