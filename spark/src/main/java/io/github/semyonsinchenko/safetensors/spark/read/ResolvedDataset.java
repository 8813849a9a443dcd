package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.dataset.ColumnSchema;
import io.github.semyonsinchenko.safetensors.dataset.Manifest;
import io.github.semyonsinchenko.safetensors.dataset.ShardCheck;
import java.io.Serializable;
import java.util.List;
import java.util.Map;

/**
 * What the driver learned about a dataset before planning: its files, the layout its rows follow,
 * and how tensor names map to columns (see {@code format/dataset.md}).
 *
 * @param files the files to read, in a stable order (the manifest's shard order, else sorted paths)
 * @param layout {@link ReadOptions.Layout#WIDE} or {@link ReadOptions.Layout#KV}, never AUTO
 * @param batchNaming a batch-mode dataset: tensors are named {@code <column>} (a file per batch) or
 *     {@code <column>/<batch>} (packed)
 * @param namingColumns the dataset's serialized columns, which reverse tensor names to columns
 *     (batch and kv); empty for plain files, where every tensor name is a column
 * @param kvSeparator kv tensors are {@code <key><kvSeparator><column>}; null: the names of earlier
 *     versions, and of plain files read as kv ({@code TensorNames.parseKv})
 * @param manifestSchema per-sample dtype and shape of each column, from the manifest; may be empty
 * @param indexRoot the dataset root whose index can pick files, or null (driver only)
 * @param indexed the version whose index can pick files (it has one, and the read is of that one
 *     dataset alone), or null (driver only)
 * @param hasManifest whether a committed version was found
 * @param shardCheck what every shard of the version must agree with, or null (plain files, the
 *     original connector's datasets)
 */
public record ResolvedDataset(List<DatasetFile> files, ReadOptions.Layout layout, boolean batchNaming,
                              List<String> namingColumns, String kvSeparator,
                              Map<String, ColumnSchema> manifestSchema,
                              String indexRoot, Manifest indexed, boolean hasManifest, ShardCheck shardCheck)
        implements Serializable {
    /** Copies the file list, the naming columns and the schema. */
    public ResolvedDataset {
        files = List.copyOf(files);
        namingColumns = List.copyOf(namingColumns);
        manifestSchema = Map.copyOf(manifestSchema);
    }

    /** This dataset as the executors need it: no file list, no index (each partition carries its file). */
    ResolvedDataset forExecutors() {
        return new ResolvedDataset(List.of(), layout, batchNaming, namingColumns, kvSeparator, manifestSchema, null,
                null, hasManifest, shardCheck);
    }

    /** The column a plain file read as kv gets when nothing names its columns. */
    public static final String DEFAULT_KV_COLUMN = "tensor";
}
