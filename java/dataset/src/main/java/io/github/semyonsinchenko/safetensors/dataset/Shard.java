package io.github.semyonsinchenko.safetensors.dataset;

import java.io.Serial;
import java.io.Serializable;

/**
 * One shard file of a dataset.
 *
 * @param file its path relative to the root, normalised
 * @param samples the real samples it holds (-1 when a manifest does not say)
 * @param bytes its size (-1 when a manifest does not say)
 */
public record Shard(String file, long samples, long bytes) implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;
}
