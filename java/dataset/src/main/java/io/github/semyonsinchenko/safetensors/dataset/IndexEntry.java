package io.github.semyonsinchenko.safetensors.dataset;

import java.io.Serial;
import java.io.Serializable;

/**
 * One row of a tensor index (see format/dataset.md).
 *
 * @param tensorKey kv: the row key; batch: the column
 * @param column the column the tensor belongs to
 * @param tensorName the tensor's name in its shard
 * @param fileName the shard, relative to the root
 * @param shape the tensor's shape
 * @param dtype its dtype
 * @param begin absolute byte offset of its data in the shard
 * @param end absolute end of its data
 */
public record IndexEntry(String tensorKey, String column, String tensorName, String fileName, long[] shape,
                         String dtype, long begin, long end) implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;
}
