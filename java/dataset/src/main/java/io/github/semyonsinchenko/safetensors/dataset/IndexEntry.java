package io.github.semyonsinchenko.safetensors.dataset;

import java.io.Serial;
import java.io.Serializable;

/** One row of {@code _tensor_index.parquet} (see format/dataset.md). */
public record IndexEntry(String tensorKey, String column, String tensorName, String fileName, long[] shape,
                         String dtype, long begin, long end) implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;
}
