package io.github.semyonsinchenko.safetensors.spark.read;

import java.io.Serializable;

/**
 * One safetensors file of a dataset, as listed on the driver.
 *
 * @param path the fully qualified path (scheme included)
 * @param length the file's size in bytes, from the listing (so readers need no extra status call)
 * @param samples the real samples in the file per the manifest's {@code samples_count} (a padded
 *     tail batch holds more rows than that), or -1 when unknown
 */
public record DatasetFile(String path, long length, long samples) implements Serializable {
    /**
     * A file whose number of samples is unknown.
     *
     * @param path the fully qualified path
     * @param length the file's size in bytes
     */
    public DatasetFile(String path, long length) {
        this(path, length, -1);
    }
}
