package io.github.semyonsinchenko.safetensors.spark.dataset;

import java.util.List;
import java.util.Locale;

/**
 * How tensors of a dataset are named (spark/DATASET.md, "Modes"), both ways: the writer names
 * them, the reader and the index rebuild parse them back.
 * <ul>
 *   <li>kv: the row key when one column is serialized, else {@code <key>/<column>};</li>
 *   <li>batch: {@code <column>/<batch>} with the batch index zero-padded to 6 digits.</li>
 * </ul>
 */
public final class TensorNames {
    private TensorNames() {}

    /** A kv tensor name split into the row key and the column. */
    public record Kv(String key, String column) {}

    /** A batch tensor name split into the column and the batch index within the shard. */
    public record Batch(String column, long batch) {}

    public static String kv(String key, String column, int columnCount) {
        return columnCount == 1 ? key : key + "/" + column;
    }

    public static String batch(String column, int batch) {
        return column + "/" + String.format(Locale.ROOT, "%06d", batch);
    }

    /** The key and column of a kv tensor name, or null when it belongs to none of {@code columns}. */
    public static Kv parseKv(String name, List<String> columns) {
        if (columns.size() == 1) {
            return new Kv(name, columns.getFirst());
        }
        for (String c : columns) {
            int slash = name.length() - c.length() - 1;
            if (slash > 0 && name.endsWith(c) && name.charAt(slash) == '/') {
                return new Kv(name.substring(0, slash), c);
            }
        }
        return null;
    }

    /** The column and batch index of a batch tensor name, or null when it is not one. */
    public static Batch parseBatch(String name) {
        int slash = name.lastIndexOf('/');
        if (slash <= 0 || slash == name.length() - 1) {
            return null;
        }
        try {
            return new Batch(name.substring(0, slash), Long.parseLong(name.substring(slash + 1)));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
