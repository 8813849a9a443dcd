package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.dataset.DatasetException;
import io.github.semyonsinchenko.safetensors.format.SafetensorsException;
import io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one file: the header first (which fixes the rows, their keys, dtypes and shapes), then, per
 * kept row, only the tensor bytes the emitted struct asks for.
 */
final class SafetensorsPartitionReader implements PartitionReader<InternalRow> {
    private static final Logger LOG = LoggerFactory.getLogger(SafetensorsPartitionReader.class);

    /** How to fill one output column. */
    private record Slot(boolean key, String column, boolean nullable, int[] parts) {}

    private static final int DATA = 0;
    private static final int SHAPE = 1;
    private static final int DTYPE = 2;

    private final DatasetFile file;
    private final Configuration conf;
    private final ResolvedDataset dataset;
    private final List<String> wideColumns;
    private final ReadOptions options;
    private final MetaFilter filter;
    private final Slot[] slots;
    private final boolean needData;

    private TensorSource source;
    private List<RowSpec> rows;
    private int next;
    private InternalRow current;
    private boolean closed;

    SafetensorsPartitionReader(DatasetFile file, Configuration conf, ResolvedDataset dataset, List<String> wideColumns,
                               StructType readSchema, ReadOptions options, MetaFilter filter) {
        this.file = file;
        this.conf = conf;
        this.dataset = dataset;
        this.wideColumns = wideColumns;
        this.options = options;
        this.filter = filter;
        boolean kv = dataset.layout() == ReadOptions.Layout.KV;
        this.slots = new Slot[readSchema.fields().length];
        boolean data = false;
        for (int i = 0; i < slots.length; i++) {
            StructField f = readSchema.fields()[i];
            if (kv && DatasetResolver.isKeyField(f)) {
                slots[i] = new Slot(true, null, f.nullable(), null);
                continue;
            }
            StructField[] sub = ((StructType) f.dataType()).fields();
            int[] parts = new int[sub.length];
            for (int j = 0; j < sub.length; j++) {
                parts[j] = switch (sub[j].name()) {
                    case TensorStruct.DATA -> DATA;
                    case TensorStruct.SHAPE -> SHAPE;
                    case TensorStruct.DTYPE -> DTYPE;
                    default -> throw new IllegalArgumentException("unknown tensor struct field " + sub[j].name());
                };
                data |= parts[j] == DATA;
            }
            slots[i] = new Slot(false, f.name(), f.nullable(), parts);
        }
        this.needData = data;
    }

    private void open() throws IOException {
        try {
            source = TensorSource.open(file, conf, needData, options.mmap());
            if (dataset.shardCheck() != null) {
                dataset.shardCheck().check(source.header(), file.path());
            }
            List<RowSpec> all = RowPlanner.plan(source.header(), dataset, wideColumns, options.unbatch(),
                    file.samples(), file.path());
            List<RowSpec> kept = new ArrayList<>(all.size());
            for (RowSpec r : all) {
                if (filter.accepts(r)) {
                    kept.add(r);
                }
            }
            rows = kept;
            if (rows.isEmpty()) {
                closeSource(); // nothing to read from this file
            } else if (needData) {
                source.expect(dataCells(kept), options.coalesceGapBytes(), options.maxReadBytes());
            }
        } catch (DatasetException e) {
            closeSource();
            throw e; // the manifest and this shard disagree: not a corrupt file to skip
        } catch (IOException | RuntimeException e) {
            closeSource();
            if (isMissing(e)) {
                if (options.ignoreMissingFiles()) {
                    LOG.warn("Skipped the missing file {}: {}", file.path(), e.getMessage());
                    rows = List.of();
                    return;
                }
                throw missing(e);
            }
            if (options.ignoreCorruptFiles()) {
                LOG.warn("Skipped the corrupted file {}: {}", file.path(), e.getMessage());
                rows = List.of();
                return;
            }
            throw named(e);
        }
    }

    /** The cells whose bytes {@link #build} will read, row by row: what the remote source plans its reads from. */
    private List<TensorRef> dataCells(List<RowSpec> kept) {
        List<TensorRef> cells = new ArrayList<>();
        for (RowSpec r : kept) {
            for (Slot s : slots) {
                TensorRef cell = s.key() ? null : r.cell(s.column());
                if (cell != null && wantsData(s)) {
                    cells.add(cell);
                }
            }
        }
        return cells;
    }

    private static boolean wantsData(Slot s) {
        for (int p : s.parts()) {
            if (p == DATA) {
                return true;
            }
        }
        return false;
    }

    /** The file is gone (deleted after the listing), as opposed to present but unreadable. */
    private static boolean isMissing(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.io.FileNotFoundException || t instanceof java.nio.file.NoSuchFileException) {
                return true;
            }
        }
        return false;
    }

    private IOException missing(Exception e) {
        return new IOException("safetensors: cannot read " + file.path() + ": the file does not exist any more ("
                + e.getClass().getSimpleName() + "); it was listed when the query was planned and deleted since, e.g."
                + " by the retention of a later overwrite or by vacuum (keep more versions with retain_versions), or"
                + " set ignoreMissingFiles=true to skip such files", e);
    }

    private IOException named(Exception e) {
        if (e instanceof SafetensorsException se) {
            return se; // its message starts with the file
        }
        if (e.getMessage() != null && e.getMessage().startsWith(file.path())) {
            return new IOException(e.getMessage(), e);
        }
        String reason = e.getMessage() == null || e.getMessage().equals(file.path())
                || e.getMessage().equals(new org.apache.hadoop.fs.Path(file.path()).toUri().getPath())
                ? e.getClass().getSimpleName() : e.getClass().getSimpleName() + ": " + e.getMessage();
        return new IOException("safetensors: cannot read " + file.path() + ": " + reason, e);
    }

    @Override
    public boolean next() throws IOException {
        if (rows == null) {
            open();
        }
        if (next >= rows.size()) {
            return false;
        }
        RowSpec spec = rows.get(next++);
        try {
            current = build(spec);
        } catch (IOException | RuntimeException e) {
            if (isMissing(e)) {
                if (options.ignoreMissingFiles()) {
                    LOG.warn("Skipped the rest of the missing file {}: {}", file.path(), e.getMessage());
                    rows = List.of();
                    closeSource();
                    return false;
                }
                throw missing(e);
            }
            if (options.ignoreCorruptFiles()) {
                LOG.warn("Skipped the rest of the corrupted file {}: {}", file.path(), e.getMessage());
                rows = List.of();
                closeSource();
                return false;
            }
            throw named(e);
        }
        return true;
    }

    private InternalRow build(RowSpec spec) throws IOException {
        Object[] values = new Object[slots.length];
        for (int i = 0; i < slots.length; i++) {
            Slot s = slots[i];
            if (s.key()) {
                values[i] = UTF8String.fromString(spec.key());
                continue;
            }
            TensorRef cell = spec.cell(s.column());
            if (cell == null) {
                if (!s.nullable()) {
                    throw new IOException(file.path() + ": a row has no tensor for column \"" + s.column()
                            + "\", which the schema declares NOT NULL"
                            + (spec.key() == null ? "" : " (tensor_key \"" + spec.key() + "\")"));
                }
                continue;
            }
            Object[] struct = new Object[s.parts().length];
            for (int j = 0; j < struct.length; j++) {
                struct[j] = switch (s.parts()[j]) {
                    case DATA -> source.read(cell.info(), cell.offset(), cell.length());
                    case SHAPE -> UnsafeArrayData.fromPrimitiveArray(cell.shape());
                    default -> UTF8String.fromString(cell.dtype());
                };
            }
            values[i] = new GenericInternalRow(struct);
        }
        return new GenericInternalRow(values);
    }

    @Override
    public InternalRow get() {
        return current;
    }

    private void closeSource() {
        TensorSource s = source;
        source = null;
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                LOG.warn("Could not close {}: {}", file.path(), e.getMessage());
            }
        }
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            closeSource();
        }
    }
}
