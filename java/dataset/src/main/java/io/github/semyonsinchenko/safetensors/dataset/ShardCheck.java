package io.github.semyonsinchenko.safetensors.dataset;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.io.Serial;
import java.io.Serializable;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A shard checked against the manifest that names it: the shard records its own layout in its
 * {@code __metadata__} ({@code write_mode}, {@code kv_separator}) and its tensors carry names, dtypes and
 * shapes, so a manifest that was edited, damaged or written by another tool for other files is noticed
 * before rows are built from it (a wrong separator would otherwise give no rows, a wrong column list
 * wrong keys). Only datasets whose manifest records a {@code write_mode} are checked: the original
 * connector's shards are read as plain files.
 *
 * <p>Serializable: the Spark connector checks the first shard on the driver (a clear error before the
 * job starts) and every other shard where it is read.
 *
 * @param layout the manifest's layout
 * @param schema the manifest's columns with their per-sample dtype and shape
 */
public record ShardCheck(Layout layout, Map<String, ColumnSchema> schema) implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;

    /** Copies the schema. */
    public ShardCheck {
        schema = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(schema));
    }

    /**
     * The check of {@code manifest}'s shards, or null when it records no write mode (nothing to check).
     *
     * @param manifest the manifest naming the shards
     * @return the check, or null
     */
    public static ShardCheck of(Manifest manifest) {
        return manifest.writeMode() == null ? null : new ShardCheck(manifest.layout(), manifest.schema());
    }

    /**
     * Checks one shard's header.
     *
     * @param header the shard's header
     * @param shard the shard, for the message
     * @throws DatasetException {@link DatasetRule#LAYOUT_MISMATCH} when its metadata records another
     *     write mode or separator; {@link DatasetRule#SCHEMA_MISMATCH} when a tensor belongs to no
     *     column, or its dtype or shape is not the column's
     */
    public void check(Header header, String shard) throws DatasetException {
        Map<String, String> meta = header.metadata();
        String mode = meta.get(Manifest.META_WRITE_MODE);
        if (mode != null && !mode.equals(layout.writeMode())) {
            throw new DatasetException(DatasetRule.LAYOUT_MISMATCH, shard, "the shard was written in " + mode
                    + " mode, the manifest says " + layout.writeMode());
        }
        String separator = meta.get(Manifest.META_KV_SEPARATOR);
        if (layout.isKv() && separator != null && layout.kvSeparator() != null
                && !separator.equals(layout.kvSeparator())) {
            throw new DatasetException(DatasetRule.LAYOUT_MISMATCH, shard, "the shard's tensors are named with"
                    + " kv_separator '" + separator + "', the manifest says '" + layout.kvSeparator() + "'");
        }
        if (schema.isEmpty()) {
            return; // a manifest without a schema: nothing names the columns
        }
        List<String> columns = List.copyOf(schema.keySet());
        for (TensorInfo t : header.tensors()) {
            String column;
            if (layout.isKv()) {
                TensorNames.Kv kv = TensorNames.parseKv(t.name(), columns, layout.kvSeparator());
                column = kv == null ? null : kv.column();
            } else {
                TensorNames.Batch b = TensorNames.parseBatch(t.name(), columns);
                column = b == null ? null : b.column();
            }
            if (column == null) {
                throw new DatasetException(DatasetRule.SCHEMA_MISMATCH, shard, "tensor \"" + t.name()
                        + "\" belongs to none of the manifest's columns " + columns
                        + (layout.isKv() ? " with kv_separator '" + layout.kvSeparator() + "'" : ""));
            }
            ColumnSchema want = schema.get(column);
            if (!t.dtype().name().equals(want.dtype())) {
                throw new DatasetException(DatasetRule.SCHEMA_MISMATCH, shard, "tensor \"" + t.name() + "\" is "
                        + t.dtype().name() + ", the manifest's column '" + column + "' is " + want.dtype());
            }
            long[] sample = layout.isBatch() && t.rank() > 0 ? Arrays.copyOfRange(t.shape(), 1, t.rank()) : t.shape();
            if (want.shape() != null && !Arrays.equals(sample, want.shape())) {
                throw new DatasetException(DatasetRule.SCHEMA_MISMATCH, shard, "tensor \"" + t.name() + "\" has "
                        + (layout.isBatch() ? "per-sample shape " : "shape ") + Arrays.toString(sample)
                        + ", the manifest's column '" + column + "' has " + Arrays.toString(want.shape()));
            }
        }
    }
}
