package io.github.semyonsinchenko.safetensors.dataset;

import java.io.Serial;
import java.io.Serializable;

/** One shard file of a dataset: its name (relative to the root), real samples and size in bytes. */
public record Shard(String file, long samples, long bytes) implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;
}
