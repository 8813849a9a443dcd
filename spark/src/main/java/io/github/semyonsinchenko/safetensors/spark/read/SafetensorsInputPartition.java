package io.github.semyonsinchenko.safetensors.spark.read;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One file, read whole by one task: files are never split.
 *
 * @param file the file
 */
public record SafetensorsInputPartition(DatasetFile file) implements InputPartition {}
