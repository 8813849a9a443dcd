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
import java.util.Arrays;
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
 *
 * <p>Batch mode stacks rows into one tensor per column, so the rows of a batch must share their
 * shapes. Rows whose shapes differ go to separate {@link ShapeStream}s, one per combination of
 * per-column shapes, each with its own batches and shard files (format/dataset.md, "Modes"); at
 * most {@value #MAX_OPEN_SHAPES} are open at once, and a row of one more shape first closes the
 * least recently used stream, its open batch becoming a tail.
 */
final class ShardDataWriter implements DataWriter<InternalRow> {
    /** Batch mode: shape streams a task keeps open at once (each holds an open batch in memory). */
    static final int MAX_OPEN_SHAPES = 8;
    /** Memory chunks of the shape streams after the first: their batches are usually few. */
    private static final long SECONDARY_CHUNK_BYTES = 4L << 20;

    private final WriteOptions options;
    private final boolean collectIndex;
    private final int partitionId;
    private final long taskId;
    private final FileSystem fs;
    private final Path attemptDir;
    private final java.nio.file.Path localDir; // non-null when the output is on the local file system
    private final ColumnEncoder[] encoders;

    private record Pending(String name, Dtype dtype, long[] shape, MemorySegment data, String key, String column) {}

    /** A shard being built: its tensors, in memory until it is streamed to its file. */
    private static final class OpenShard implements AutoCloseable {
        final ShardBuffer buffer;
        final List<Pending> pending = new ArrayList<>();
        long pendingBytes;
        long samples;
        int batches; // batch mode: batches in this shard

        OpenShard(ShardBuffer buffer) {
            this.buffer = buffer;
        }

        boolean hasTensors() {
            return pending.stream().anyMatch(p -> p != null);
        }

        void reset() {
            pending.clear();
            buffer.reset();
            pendingBytes = 0;
            samples = 0;
            batches = 0;
        }

        @Override
        public void close() {
            buffer.close();
        }
    }

    /** Batch mode: the rows of one combination of per-column shapes, their open batch and their shard. */
    private static final class ShapeStream {
        final OpenShard shard;
        final ColumnSchema[] schema; // per column: dtype and per-sample shape
        final long[] sampleBytes;
        final MemorySegment[] slices; // the open batch, one slice per column
        int rows;                     // rows in the open batch

        ShapeStream(OpenShard shard, ColumnSchema[] schema, long[] sampleBytes) {
            this.shard = shard;
            this.schema = schema;
            this.sampleBytes = sampleBytes;
            this.slices = new MemorySegment[schema.length];
        }

        boolean matches(ColumnEncoder[] encoders) {
            for (int c = 0; c < schema.length; c++) {
                if (!Arrays.equals(schema[c].shape(), encoders[c].shape)) {
                    return false;
                }
            }
            return true;
        }
    }

    private final OpenShard kv; // kv mode's shard being built (null in batch mode)
    private final Map<String, int[]> shardKeys = new HashMap<>(); // kv lastWin: key -> its pending indexes
    // Batch mode: the open shape streams, least recently used first; the last one used.
    private final LinkedHashMap<String, ShapeStream> streams = new LinkedHashMap<>(16, 0.75f, true);
    private ShapeStream current;

    // What this attempt has produced.
    private final List<Shard> shards = new ArrayList<>();
    private final List<IndexEntry> index = new ArrayList<>();
    private final Set<String> taskKeys = new HashSet<>(); // kv fail: every key this task wrote
    private final ColumnSchema[] seen;                    // per-sample dtype/shape of each column (null: varies)
    private boolean dirCreated;
    private final UUID writerId = UUID.randomUUID(); // one per task writer, as the shard names require
    private int shardIndex;                          // files this writer has produced

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
        this.encoders = new ColumnEncoder[n];
        for (int i = 0; i < n; i++) {
            encoders[i] = new ColumnEncoder(options.columns.get(i));
        }
        this.seen = new ColumnSchema[n];
        this.kv = options.mode == WriteOptions.Mode.KV ? new OpenShard(new ShardBuffer()) : null;
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
                    Pending p = kv.pending.set(i, null);
                    kv.pendingBytes -= p.data().byteSize() + headerBytes(p.name(), p.shape());
                }
                kv.samples--;
            }
        }
        if (kv.samples > 0 && kv.pendingBytes + rowBytes > options.targetShardBytes) {
            flush(kv);
        }
        int[] slots = new int[encoders.length];
        for (int c = 0; c < encoders.length; c++) {
            ColumnEncoder e = encoders[c];
            String column = e.spec.name();
            String name = TensorNames.kv(key, column, options.kvSeparator);
            MemorySegment slice = kv.buffer.allocate(e.byteSize);
            encode(c, slice, where);
            slots[c] = kv.pending.size();
            kv.pending.add(new Pending(name, e.dtype, e.shape, slice, key, column));
        }
        if (options.duplicates == WriteOptions.Duplicates.LAST_WIN) {
            shardKeys.put(key, slots);
        }
        kv.pendingBytes += rowBytes;
        kv.samples++;
    }

    // ------------------------------------------------------------------ batch mode

    private void writeBatchRow(InternalRow row) throws IOException {
        String where = "row " + rowNumber + " of partition " + partitionId;
        for (int c = 0; c < encoders.length; c++) {
            inspect(c, row, where);
        }
        ShapeStream s = streamOfRow();
        if (s.rows == 0) {
            startBatch(s);
        }
        for (int c = 0; c < encoders.length; c++) {
            encode(c, s.slices[c].asSlice(s.rows * s.sampleBytes[c], s.sampleBytes[c]), where);
        }
        s.rows++;
        s.shard.samples++;
        if (s.rows == options.batchSize) {
            finishBatch(s, options.batchSize);
            if (!options.packBatches) {
                flush(s.shard); // one standalone file per batch
            }
        }
    }

    /** The stream of the row just inspected: the last one used when its shapes match (the usual case). */
    private ShapeStream streamOfRow() throws IOException {
        if (current != null && current.matches(encoders)) {
            return current;
        }
        StringBuilder key = new StringBuilder();
        for (ColumnEncoder e : encoders) {
            key.append(Arrays.toString(e.shape)).append(';');
        }
        ShapeStream s = streams.get(key.toString());
        if (s == null) {
            if (streams.size() == MAX_OPEN_SHAPES) {
                var eldest = streams.entrySet().iterator().next();
                closeStream(eldest.getValue());
                streams.remove(eldest.getKey());
            }
            ColumnSchema[] schema = new ColumnSchema[encoders.length];
            long[] sampleBytes = new long[encoders.length];
            for (int c = 0; c < encoders.length; c++) {
                schema[c] = new ColumnSchema(encoders[c].dtype.name(), encoders[c].shape);
                sampleBytes[c] = encoders[c].byteSize;
            }
            ShardBuffer buffer = streams.isEmpty() ? new ShardBuffer() : new ShardBuffer(SECONDARY_CHUNK_BYTES);
            s = new ShapeStream(new OpenShard(buffer), schema, sampleBytes);
            streams.put(key.toString(), s);
        }
        current = s;
        return s;
    }

    /** Ends a stream: its open batch becomes a tail, its shard is written, its memory released. */
    private void closeStream(ShapeStream s) throws IOException {
        finishTail(s);
        if (s.shard.hasTensors()) {
            flush(s.shard);
        }
        s.shard.close();
        if (current == s) {
            current = null;
        }
    }

    private void startBatch(ShapeStream s) throws IOException {
        long batchBytes = batchBytes(s);
        if (!s.shard.pending.isEmpty() && s.shard.pendingBytes + batchBytes > options.targetShardBytes) {
            flush(s.shard);
        }
        for (int c = 0; c < encoders.length; c++) {
            s.slices[c] = s.shard.buffer.allocate(s.sampleBytes[c] * options.batchSize);
        }
        s.shard.pendingBytes += batchBytes;
    }

    private long batchBytes(ShapeStream s) {
        long total = 0;
        for (int c = 0; c < encoders.length; c++) {
            total += s.sampleBytes[c] * options.batchSize
                    + Header.maxEntryBytes(batchTensorName(s, encoders[c].spec.name()), s.schema[c].shape().length + 1);
        }
        return total;
    }

    /** Registers the stream's filled batch as one tensor per column, {@code rows} long. */
    private void finishBatch(ShapeStream s, int rows) {
        for (int c = 0; c < encoders.length; c++) {
            String column = encoders[c].spec.name();
            long[] shape = withBatchDim(rows, s.schema[c].shape());
            String name = batchTensorName(s, column);
            s.shard.pending.add(new Pending(name, Dtype.fromName(s.schema[c].dtype()), shape,
                    s.slices[c].asSlice(0, rows * s.sampleBytes[c]), column, column));
        }
        s.shard.batches++;
        s.rows = 0;
    }

    private void finishTail(ShapeStream s) {
        if (s.rows == 0) {
            return;
        }
        switch (options.tail) {
            case WRITE -> {
                for (int c = 0; c < encoders.length; c++) {
                    s.shard.pendingBytes -= (options.batchSize - s.rows) * s.sampleBytes[c];
                }
                finishBatch(s, s.rows);
            }
            case PAD -> {
                for (int c = 0; c < encoders.length; c++) {
                    s.slices[c].asSlice(s.rows * s.sampleBytes[c]).fill((byte) 0);
                }
                finishBatch(s, options.batchSize); // padding rows are not counted as samples
            }
            case DROP -> {
                s.shard.pendingBytes -= batchBytes(s);
                s.shard.samples -= s.rows;
                s.rows = 0;
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
        ColumnEncoder e = encoders[c];
        try {
            e.inspect(row);
        } catch (IllegalArgumentException | ArithmeticException ex) {
            throw WriteErrors.data(e.spec.name(), where, ex.getMessage());
        }
        ColumnSchema now = new ColumnSchema(e.dtype.name(), e.shape);
        if (seen[c] == null) {
            seen[c] = now;
        } else if (seen[c].dtype().equals(now.dtype())) {
            // kv: each row is its own tensor; batch: rows of each shape are batched apart. Shapes may vary.
            seen[c] = seen[c].mergeKv(now);
        } else {
            throw WriteErrors.data(e.spec.name(), where, "the tensor is " + now + " but earlier rows of this column "
                    + "are " + seen[c] + "; every row of a column must have the same dtype (give 'dtype' to convert "
                    + "floats, or write tensors of other dtypes to separate columns or datasets)");
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

    /** The name of the tensor of {@code column} in the stream's current batch. */
    private String batchTensorName(ShapeStream s, String column) {
        return options.packBatches ? TensorNames.packedBatch(column, s.shard.batches) : TensorNames.batch(column);
    }

    /** Streams the shard's tensors into a new file in the attempt directory. */
    private void flush(OpenShard shard) throws IOException {
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
        for (Pending p : shard.pending) {
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
        shards.add(new Shard(file, shard.samples, header.fileSize()));
        if (collectIndex) {
            for (TensorInfo t : header.tensors()) {
                Pending p = byName.get(t.name());
                index.add(new IndexEntry(p.key(), p.column(), t.name(), file, t.shape(), t.dtype().name(),
                        header.dataOffset() + t.begin(), header.dataOffset() + t.end()));
            }
        }
        shard.reset();
        shardKeys.clear();
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        if (kv != null && kv.hasTensors()) {
            flush(kv);
        }
        for (ShapeStream s : streams.values()) {
            finishTail(s);
            if (s.shard.hasTensors()) {
                flush(s.shard);
            }
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
        fs.delete(attemptDir, true);
    }

    @Override
    public void close() {
        if (kv != null) {
            kv.close();
        }
        for (ShapeStream s : streams.values()) {
            s.shard.close();
        }
    }

    @Override
    public String toString() {
        return "ShardDataWriter[partition " + partitionId + ", task " + taskId + ", " + attemptDir + "]";
    }
}
