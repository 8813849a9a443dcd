package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.dataset.TensorNames;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns a file's header into its rows, following {@code format/dataset.md}: no tensor byte is
 * needed to know how many rows a file has, which keys they carry, or the dtype and shape of every
 * cell. That is what makes {@code count()}, metadata-only projections and dtype/shape/key filters
 * free of data reads.
 */
final class RowPlanner {
    private RowPlanner() {}

    /**
     * @param wideColumns the table's tensor columns, for plain wide files (tensor name = column)
     */
    static List<RowSpec> plan(Header header, ResolvedDataset ds, List<String> wideColumns, boolean unbatch,
                              long samples, String source) throws IOException {
        List<RowSpec> rows;
        if (ds.layout() == ReadOptions.Layout.KV) {
            rows = kvRows(header, ds.namingColumns(), ds.kvSeparator());
        } else if (ds.batchNaming()) {
            rows = batchRows(header, ds.namingColumns());
        } else {
            Map<String, TensorRef> cells = new HashMap<>();
            for (String c : wideColumns) {
                TensorInfo t = header.tensor(c);
                if (t != null) {
                    cells.put(c, whole(t, source));
                }
            }
            rows = List.of(new RowSpec(null, cells));
        }
        if (!unbatch) {
            return rows;
        }
        List<RowSpec> out = unbatch(rows, source);
        // A padded tail batch (tail_strategy=pad) holds rows beyond the shard's real samples.
        return samples >= 0 && ds.batchNaming() && samples < out.size() ? out.subList(0, (int) samples) : out;
    }

    private static TensorRef whole(TensorInfo t, String source) throws IOException {
        return new TensorRef(t, 0, t.byteSize(), intShape(t.shape(), 0, t, source));
    }

    static int[] intShape(long[] shape, int from, TensorInfo t, String source) throws IOException {
        int[] out = new int[shape.length - from];
        for (int i = from; i < shape.length; i++) {
            if (shape[i] > Integer.MAX_VALUE) {
                throw new IOException(source + ": tensor \"" + t.name() + "\" has dimension " + shape[i]
                        + ", larger than a Spark int");
            }
            out[i - from] = (int) shape[i];
        }
        return out;
    }

    /** kv: tensor name {@code <key><separator><column>}; rows in order of first appearance. */
    private static List<RowSpec> kvRows(Header header, List<String> columns, String separator) throws IOException {
        Map<String, Map<String, TensorRef>> byKey = new LinkedHashMap<>();
        for (TensorInfo t : header.tensors()) {
            String name = t.name();
            TensorNames.Kv kv = TensorNames.parseKv(name, columns, separator);
            if (kv == null) {
                continue; // not a tensor of any serialized column
            }
            String key = kv.key();
            String column = kv.column();
            byKey.computeIfAbsent(key, k -> new HashMap<>()).put(column, whole(t, name));
        }
        List<RowSpec> rows = new ArrayList<>(byKey.size());
        for (Map.Entry<String, Map<String, TensorRef>> e : byKey.entrySet()) {
            rows.add(new RowSpec(e.getKey(), e.getValue()));
        }
        return rows;
    }

    /** batch: tensor {@code <column>} (a file per batch) or {@code <column>/<batch>} (packed); one row per batch, in order. */
    private static List<RowSpec> batchRows(Header header, List<String> columns) throws IOException {
        TreeMap<Long, Map<String, TensorRef>> byBatch = new TreeMap<>();
        for (TensorInfo t : header.tensors()) {
            String name = t.name();
            TensorNames.Batch parsed = TensorNames.parseBatch(name, columns);
            if (parsed == null) {
                continue;
            }
            String column = parsed.column();
            long batch = parsed.batch();
            byBatch.computeIfAbsent(batch, b -> new HashMap<>()).put(column, whole(t, name));
        }
        List<RowSpec> rows = new ArrayList<>(byBatch.size());
        for (Map<String, TensorRef> cells : byBatch.values()) {
            rows.add(new RowSpec(null, cells));
        }
        return rows;
    }

    /** One row per sample: every cell of a row is split along its (shared) leading dimension. */
    private static List<RowSpec> unbatch(List<RowSpec> rows, String source) throws IOException {
        List<RowSpec> out = new ArrayList<>();
        for (RowSpec row : rows) {
            long n = -1;
            for (TensorRef r : row.cells().values()) {
                TensorInfo t = r.info();
                if (t.rank() == 0) {
                    throw new IOException(source + ": tensor \"" + t.name()
                            + "\" is a scalar; unbatch needs a leading (batch) dimension");
                }
                if (n >= 0 && t.dim(0) != n) {
                    throw new IOException(source + ": tensor \"" + t.name() + "\" has " + t.dim(0)
                            + " rows but another tensor of the same batch has " + n + "; cannot unbatch");
                }
                n = t.dim(0);
            }
            for (long i = 0; i < n; i++) {
                Map<String, TensorRef> cells = HashMap.newHashMap(row.cells().size());
                for (Map.Entry<String, TensorRef> e : row.cells().entrySet()) {
                    TensorInfo t = e.getValue().info();
                    long perSample;
                    try {
                        perSample = t.dtype().storageBytes(t.elementCount() / n);
                    } catch (IllegalArgumentException ex) {
                        throw new IOException(source + ": tensor \"" + t.name() + "\": one sample of " + t.dtype()
                                + " is not a whole number of bytes; cannot unbatch", ex);
                    }
                    cells.put(e.getKey(), new TensorRef(t, i * perSample, perSample,
                            intShape(t.shape(), 1, t, source)));
                }
                out.add(new RowSpec(row.key(), cells));
            }
        }
        return out;
    }
}
