package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.dataset.ColumnSchema;
import io.github.semyonsinchenko.safetensors.dataset.CrashPoints;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.dataset.IndexEntry;
import io.github.semyonsinchenko.safetensors.dataset.Manifest;
import io.github.semyonsinchenko.safetensors.dataset.Shard;
import io.github.semyonsinchenko.safetensors.dataset.TensorNames;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * One task attempt's writer. Rows become tensors in an off-heap {@link ShardBuffer}; when the next
 * unit (a row in kv mode, a batch in batch mode) would push the shard past the target size, the
 * shard is streamed to this attempt's own staging directory and a new one starts. Nothing here is
 * visible to readers: the driver moves the files of committed attempts into place. {@link #abort}
 * deletes the attempt directory.
 */
final class ShardDataWriter implements DataWriter<InternalRow> {
    private final WriteOptions options;
    private final boolean collectIndex;
    private final int partitionId;
    private final long taskId;
    private final FileSystem fs;
    private final Path attemptDir;
    private final java.nio.file.Path localDir; // non-null when the output is on the local file system
    private final TensorEncoder[] encoders;
    private final ShardBuffer buffer = new ShardBuffer();

    // The shard being built.
    private record Pending(String name, Dtype dtype, long[] shape, MemorySegment data, String key, String column) {}

    private final List<Pending> pending = new ArrayList<>();
    private long pendingBytes;
    private long shardSamples;
    private int batchInShard;
    private final Map<String, int[]> shardKeys = new HashMap<>(); // kv lastWin: key -> its pending indexes

    // What this attempt has produced.
    private final List<Shard> shards = new ArrayList<>();
    private final List<IndexEntry> index = new ArrayList<>();
    private final Set<String> taskKeys = new HashSet<>(); // kv fail: every key this task wrote
    private final ColumnSchema[] seen;                    // per-sample dtype/shape of each column
    private boolean dirCreated;
    private final UUID writerId = UUID.randomUUID(); // one per task writer, as the shard names require
    private int shardIndex;                          // files this writer has produced

    // Batch mode: the slices of the batch being filled, one per column.
    private final MemorySegment[] batchSlices;
    private final long[] sampleBytes;
    private int rowsInBatch;
    private long rowNumber; // rows seen by this task, for error messages

    ShardDataWriter(WriteOptions options, String jobStagingDir, boolean collectIndex, Configuration conf,
                    int partitionId, long taskId) {
        this.options = options;
        this.collectIndex = collectIndex;
        this.partitionId = partitionId;
        this.taskId = taskId;
        this.attemptDir = new Path(jobStagingDir, DatasetLayout.attemptDirName(partitionId, taskId));
        try {
            this.fs = attemptDir.getFileSystem(conf);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the file system of " + attemptDir, e);
        }
        this.localDir = "file".equals(fs.getUri().getScheme())
                ? java.nio.file.Path.of(fs.makeQualified(attemptDir).toUri()) : null;
        int n = options.columns.size();
        this.encoders = new TensorEncoder[n];
        for (int i = 0; i < n; i++) {
            encoders[i] = new TensorEncoder(options.columns.get(i));
        }
        this.seen = new ColumnSchema[n];
        this.batchSlices = new MemorySegment[n];
        this.sampleBytes = new long[n];
    }

    @Override
    public void write(InternalRow row) throws IOException {
        if (++rowNumber == 1) {
            CrashPoints.reached(CrashPoints.TASK_RUNNING);
        }
        if (options.mode == WriteOptions.Mode.KV) {
            writeKv(row);
        } else {
            writeBatchRow(row);
        }
    }

    // ------------------------------------------------------------------ kv mode

    private void writeKv(InternalRow row) throws IOException {
        if (row.isNullAt(options.nameOrdinal)) {
            throw new IllegalArgumentException("[safetensors] key column '" + options.nameCol + "' is null in row "
                    + rowNumber + " of partition " + partitionId + "; every row needs a key");
        }
        String key = row.getUTF8String(options.nameOrdinal).toString();
        String where = "row key '" + key + "'";
        if (Header.METADATA_KEY.equals(key)) {
            throw new IllegalArgumentException("[safetensors] " + where + ": '" + Header.METADATA_KEY
                    + "' is reserved by the safetensors header and cannot name a tensor");
        }
        long rowBytes = 0;
        for (int c = 0; c < encoders.length; c++) {
            rowBytes += inspect(c, row, where) + headerBytes(key, c);
        }
        if (options.duplicates == WriteOptions.Duplicates.FAIL) {
            if (!taskKeys.add(key)) {
                throw new IllegalArgumentException("[safetensors] duplicate key '" + key + "' in column '"
                        + options.nameCol + "' (partition " + partitionId + "); with duplicatesStrategy=fail every "
                        + "key must be unique; use duplicatesStrategy=lastWin to keep the last row");
            }
        } else {
            int[] previous = shardKeys.remove(key);
            if (previous != null) {
                for (int i : previous) {
                    Pending p = pending.set(i, null);
                    pendingBytes -= p.data().byteSize() + headerBytes(p.name(), p.shape());
                }
                shardSamples--;
            }
        }
        if (shardSamples > 0 && pendingBytes + rowBytes > options.targetShardBytes) {
            flush();
        }
        int[] slots = new int[encoders.length];
        for (int c = 0; c < encoders.length; c++) {
            TensorEncoder e = encoders[c];
            String column = e.spec.name();
            String name = TensorNames.kv(key, column, options.kvSeparator);
            MemorySegment slice = buffer.allocate(e.byteSize);
            encode(c, slice, where);
            slots[c] = pending.size();
            pending.add(new Pending(name, e.dtype, e.shape, slice, key, column));
        }
        if (options.duplicates == WriteOptions.Duplicates.LAST_WIN) {
            shardKeys.put(key, slots);
        }
        pendingBytes += rowBytes;
        shardSamples++;
    }

    // ------------------------------------------------------------------ batch mode

    private void writeBatchRow(InternalRow row) throws IOException {
        String where = "row " + rowNumber + " of partition " + partitionId;
        for (int c = 0; c < encoders.length; c++) {
            inspect(c, row, where);
        }
        if (rowsInBatch == 0) {
            startBatch();
        }
        for (int c = 0; c < encoders.length; c++) {
            encode(c, batchSlices[c].asSlice(rowsInBatch * sampleBytes[c], sampleBytes[c]), where);
        }
        rowsInBatch++;
        shardSamples++;
        if (rowsInBatch == options.batchSize) {
            finishBatch(options.batchSize);
            if (!options.packBatches) {
                flush(); // one standalone file per batch
            }
        }
    }

    private void startBatch() throws IOException {
        long batchBytes = batchBytes();
        if (!pending.isEmpty() && pendingBytes + batchBytes > options.targetShardBytes) {
            flush();
        }
        for (int c = 0; c < encoders.length; c++) {
            sampleBytes[c] = encoders[c].byteSize;
            batchSlices[c] = buffer.allocate(sampleBytes[c] * options.batchSize);
        }
        pendingBytes += batchBytes;
    }

    private long batchBytes() {
        long total = 0;
        for (int c = 0; c < encoders.length; c++) {
            TensorEncoder e = encoders[c];
            total += e.byteSize * options.batchSize + Header.maxEntryBytes(batchTensorName(e.spec.name()),
                    e.shape.length + 1);
        }
        return total;
    }

    /** Registers the filled batch as one tensor per column, {@code rows} long. */
    private void finishBatch(int rows) {
        for (int c = 0; c < encoders.length; c++) {
            String column = encoders[c].spec.name();
            long[] shape = withBatchDim(rows, seen[c].shape());
            String name = batchTensorName(column);
            pending.add(new Pending(name, Dtype.fromName(seen[c].dtype()), shape,
                    batchSlices[c].asSlice(0, rows * sampleBytes[c]), column, column));
        }
        batchInShard++;
        rowsInBatch = 0;
    }

    private void finishTail() {
        if (rowsInBatch == 0) {
            return;
        }
        switch (options.tail) {
            case WRITE -> {
                for (int c = 0; c < encoders.length; c++) {
                    pendingBytes -= (options.batchSize - rowsInBatch) * sampleBytes[c];
                }
                finishBatch(rowsInBatch);
            }
            case PAD -> {
                for (int c = 0; c < encoders.length; c++) {
                    batchSlices[c].asSlice(rowsInBatch * sampleBytes[c]).fill((byte) 0);
                }
                finishBatch(options.batchSize); // padding rows are not counted as samples
            }
            case DROP -> {
                pendingBytes -= batchBytes();
                shardSamples -= rowsInBatch;
                rowsInBatch = 0;
            }
        }
    }

    private static long[] withBatchDim(long rows, long[] sample) {
        long[] shape = new long[sample.length + 1];
        shape[0] = rows;
        System.arraycopy(sample, 0, shape, 1, sample.length);
        return shape;
    }

    // ------------------------------------------------------------------ common

    /** Inspects column c of the row and checks it agrees with the column's earlier rows. */
    private long inspect(int c, InternalRow row, String where) {
        TensorEncoder e = encoders[c];
        try {
            e.inspect(row);
        } catch (IllegalArgumentException | ArithmeticException ex) {
            throw WriteErrors.data(e.spec.name(), where, ex.getMessage());
        }
        ColumnSchema now = new ColumnSchema(e.dtype.name(), e.shape);
        if (seen[c] == null) {
            seen[c] = now;
        } else if (options.mode == WriteOptions.Mode.KV && seen[c].dtype().equals(now.dtype())) {
            seen[c] = seen[c].mergeKv(now); // each row is its own tensor: shapes may vary, dtypes may not
        } else if (!seen[c].sameAs(now)) {
            throw WriteErrors.data(e.spec.name(), where, "the tensor is " + now + " but earlier rows of this column "
                    + "are " + seen[c] + "; every row of a column must have the same dtype and shape (give "
                    + "'shapes' to reshape, or write differently shaped tensors to separate columns or datasets)");
        }
        return e.byteSize;
    }

    private void encode(int c, MemorySegment out, String where) {
        try {
            encoders[c].encode(out);
        } catch (IllegalArgumentException ex) {
            throw WriteErrors.data(encoders[c].spec.name(), where, ex.getMessage());
        }
    }

    private long headerBytes(String key, int c) {
        return headerBytes(TensorNames.kv(key, encoders[c].spec.name(), options.kvSeparator), encoders[c].shape);
    }

    private static long headerBytes(String name, long[] shape) {
        return Header.maxEntryBytes(name, shape.length);
    }

    /** The name of the current batch's tensor of {@code column}. */
    private String batchTensorName(String column) {
        return options.packBatches ? TensorNames.packedBatch(column, batchInShard) : TensorNames.batch(column);
    }

    /** Streams the pending tensors into a new shard file in the attempt directory. */
    private void flush() throws IOException {
        SafetensorsWriter writer = new SafetensorsWriter()
                .metadata(Manifest.META_CREATED_BY, Manifest.createdBy())
                .metadata(Manifest.META_WRITE_MODE, options.mode == WriteOptions.Mode.KV ? "kv" : "batch");
        if (options.mode == WriteOptions.Mode.KV) {
            writer.metadata(Manifest.META_NAME_COL, options.nameCol)
                    .metadata(Manifest.META_KV_SEPARATOR, options.kvSeparator);
        } else {
            writer.metadata(Manifest.META_BATCH_SIZE, Integer.toString(options.batchSize))
                    .metadata(Manifest.META_TAIL_STRATEGY, options.tail.name().toLowerCase(java.util.Locale.ROOT))
                    .metadata(Manifest.META_PACK_BATCHES, Boolean.toString(options.packBatches));
        }
        Map<String, Pending> byName = new LinkedHashMap<>();
        for (Pending p : pending) {
            if (p != null) {
                writer.add(p.name(), p.dtype(), p.shape(), p.data());
                byName.put(p.name(), p);
            }
        }
        String file = DatasetLayout.shardName(partitionId, shardIndex++, writerId);
        if (!dirCreated) {
            if (localDir != null) {
                Files.createDirectories(localDir);
            } else {
                fs.mkdirs(attemptDir);
            }
            dirCreated = true;
        }
        Header header;
        if (localDir != null) {
            try (FileChannel ch = FileChannel.open(localDir.resolve(file), StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE)) {
                header = writer.write(ch);
                if (options.commitPolicy.fsync()) {
                    ch.force(true);
                }
            }
        } else {
            try (FSDataOutputStream out = fs.create(new Path(attemptDir, file), false)) {
                header = writer.write(out);
                if (options.commitPolicy.fsync()) {
                    out.hsync();
                }
            }
        }
        shards.add(new Shard(file, shardSamples, header.fileSize()));
        if (collectIndex) {
            for (TensorInfo t : header.tensors()) {
                Pending p = byName.get(t.name());
                index.add(new IndexEntry(p.key(), p.column(), t.name(), file, t.shape(), t.dtype().name(),
                        header.dataOffset() + t.begin(), header.dataOffset() + t.end()));
            }
        }
        pending.clear();
        shardKeys.clear();
        buffer.reset();
        pendingBytes = 0;
        shardSamples = 0;
        batchInShard = 0;
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        if (options.mode == WriteOptions.Mode.BATCH) {
            finishTail();
        }
        if (pending.stream().anyMatch(p -> p != null)) {
            flush();
        }
        Map<String, ColumnSchema> schema = new LinkedHashMap<>();
        for (int c = 0; c < encoders.length; c++) {
            if (seen[c] != null) {
                schema.put(encoders[c].spec.name(), seen[c]);
            }
        }
        CrashPoints.reached(CrashPoints.TASK_STAGED);
        return new ShardCommitMessage(partitionId, taskId, attemptDir.toString(), List.copyOf(shards), schema,
                List.copyOf(index));
    }

    @Override
    public void abort() throws IOException {
        pending.clear();
        fs.delete(attemptDir, true);
    }

    @Override
    public void close() {
        buffer.close();
    }

    @Override
    public String toString() {
        return "ShardDataWriter[partition " + partitionId + ", task " + taskId + ", " + attemptDir + "]";
    }
}
