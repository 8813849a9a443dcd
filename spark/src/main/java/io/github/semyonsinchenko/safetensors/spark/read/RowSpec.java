package io.github.semyonsinchenko.safetensors.spark.read;

import java.util.Map;

/**
 * One output row, known from the header alone: its key (kv layout, else null) and, per column,
 * the tensor (slice) holding its value. A column absent from the map is null in this row.
 */
record RowSpec(String key, Map<String, TensorRef> cells) {
    TensorRef cell(String column) {
        return cells.get(column);
    }
}
