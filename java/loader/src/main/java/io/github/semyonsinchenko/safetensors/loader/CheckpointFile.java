package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.Header;
import java.util.Objects;

/**
 * One safetensors file of a checkpoint after the metadata pass: where it is, what the listing said
 * about it, and its validated header. A tensor's absolute byte range is
 * {@code header.dataOffset() + info.begin()} to {@code header.dataOffset() + info.end()}.
 *
 * @param path the fully qualified path (e.g. {@code s3a://bucket/model-00001-of-00002.safetensors})
 * @param length the file's length from the listing
 * @param modificationTime the listing's modification time (ms), part of the metadata cache key
 * @param header the parsed, validated header
 */
public record CheckpointFile(String path, long length, long modificationTime, Header header) {
    /** Checks that path and header are given. */
    public CheckpointFile {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(header, "header");
    }
}
