package io.github.semyonsinchenko.safetensors.dataset;

import java.util.List;
import java.util.Locale;

/**
 * How tensors of a dataset are named (format/dataset.md, "Modes"), both ways: the writer names
 * them, the reader and the index rebuild parse them back.
 * <ul>
 *   <li>kv: {@code <key><separator><column>} for every serialized column (separator
 *       {@code kv_separator}, default {@value #DEFAULT_KV_SEPARATOR}), as the original connector
 *       names them. Datasets written before the separator was recorded ({@code separator == null})
 *       used the row key alone for one column, else {@code <key>/<column>};</li>
 *   <li>batch: the column name (one file per batch); with {@code pack_batches} several batches
 *       share a file and batch {@code b} is {@code <column>/<b>}, {@code b} zero-padded to 6 digits.</li>
 * </ul>
 */
public final class TensorNames {
    private TensorNames() {}

    /** The separator of kv tensor names when the write names none (the original connector's). */
    public static final String DEFAULT_KV_SEPARATOR = "__";
    /** The separator of datasets written before {@code kv_separator} existed. */
    private static final String LEGACY_KV_SEPARATOR = "/";

    /**
     * A kv tensor name split into the row key and the column.
     *
     * @param key the row key
     * @param column the column
     */
    public record Kv(String key, String column) {}

    /**
     * A batch tensor name split into the column and the batch index within the shard.
     *
     * @param column the column
     * @param batch the batch's index within its shard (0 for a file of one batch)
     */
    public record Batch(String column, long batch) {}

    /**
     * The kv tensor name {@code <key><separator><column>}.
     *
     * @param key the row key
     * @param column the column
     * @param separator the dataset's {@code kv_separator}
     * @return the kv tensor name {@code <key><separator><column>}
     */
    public static String kv(String key, String column, String separator) {
        return key + separator + column;
    }

    /**
     * The name of its tensor in a file holding one batch.
     *
     * @param column the column
     * @return the name of its tensor in a file holding one batch
     */
    public static String batch(String column) {
        return column;
    }

    /**
     * The name of its tensor there.
     *
     * @param column the column
     * @param batch the batch's index within its packed file
     * @return the name of its tensor there
     */
    public static String packedBatch(String column, int batch) {
        return column + "/" + String.format(Locale.ROOT, "%06d", batch);
    }

    /**
     * Why {@code columns} cannot be told apart in kv tensor names with {@code separator}, or null.
     * When no column name ends with {@code separator + another column}, at most one column is a
     * suffix match of any name, so {@link #parseKv} is unambiguous.
     *
     * @param columns the serialized columns
     * @param separator the kv separator
     * @return the problem in words, or null
     */
    public static String kvAmbiguity(List<String> columns, String separator) {
        for (String a : columns) {
            for (String b : columns) {
                if (!a.equals(b) && b.endsWith(separator + a)) {
                    return "columns '" + b + "' and '" + a + "': kv tensors are named <key>" + separator
                            + "<column>, and '" + b + "' ends with '" + separator + a + "', so a tensor name could "
                            + "belong to either; rename a column or choose another kv_separator";
                }
            }
        }
        return null;
    }

    /**
     * The key and column of a kv tensor name, or null when it belongs to none of {@code columns}.
     *
     * @param name the tensor name
     * @param columns the dataset's columns
     * @param separator the dataset's {@code kv_separator}; null for a dataset written before it was
     *     recorded (bare key for one column, else {@code <key>/<column>})
     * @return the key and column, or null
     */
    public static Kv parseKv(String name, List<String> columns, String separator) {
        if (separator == null) {
            if (columns.size() == 1) {
                return new Kv(name, columns.getFirst());
            }
            separator = LEGACY_KV_SEPARATOR;
        }
        for (String c : columns) {
            int cut = name.length() - c.length() - separator.length();
            if (cut >= 0 && name.endsWith(c) && name.startsWith(separator, cut)) {
                return new Kv(name.substring(0, cut), c);
            }
        }
        return null;
    }

    /**
     * The column and batch index of a batch tensor name, or null when it is not one: a name equal
     * to a column is that column's only batch in its file; otherwise {@code <column>/<batch>}.
     *
     * @param name the tensor name
     * @param columns the dataset's columns
     * @return the column and batch, or null
     */
    public static Batch parseBatch(String name, List<String> columns) {
        if (columns.contains(name)) {
            return new Batch(name, 0);
        }
        int slash = name.lastIndexOf('/');
        if (slash <= 0 || slash == name.length() - 1) {
            return null;
        }
        String column = name.substring(0, slash);
        if (!columns.contains(column)) {
            return null;
        }
        try {
            return new Batch(column, Long.parseLong(name.substring(slash + 1)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * Why they cannot be packed (a column looks like another column's packed batch), or null.
     *
     * @param columns the serialized columns
     * @return why they cannot be packed (a column looks like another column's packed batch), or null
     */
    public static String packedAmbiguity(List<String> columns) {
        for (String c : columns) {
            int slash = c.lastIndexOf('/');
            if (slash > 0 && columns.contains(c.substring(0, slash)) && c.substring(slash + 1).matches("[0-9]+")) {
                return "column '" + c + "' looks like batch " + c.substring(slash + 1) + " of column '"
                        + c.substring(0, slash) + "' in a packed file; rename it or write without pack_batches";
            }
        }
        return null;
    }
}
