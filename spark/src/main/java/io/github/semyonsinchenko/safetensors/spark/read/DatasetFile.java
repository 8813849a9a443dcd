package io.github.semyonsinchenko.safetensors.spark.read;

import java.io.Serializable;

/**
 * One safetensors file of a dataset, as listed on the driver.
 *
 * @param path the fully qualified path (scheme included)
 * @param length the file's size in bytes, from the listing (so readers need no extra status call)
 */
public record DatasetFile(String path, long length) implements Serializable {}
