package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.spark.SerializableHadoopConf;
import io.github.semyonsinchenko.safetensors.spark.write.ShardCommitMessage.ColumnSchema;
import io.github.semyonsinchenko.safetensors.spark.write.ShardCommitMessage.IndexEntry;
import io.github.semyonsinchenko.safetensors.spark.write.ShardCommitMessage.Shard;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * The job-level commit protocol (driver side).
 *
 * <ol>
 *   <li>Each task attempt writes its shards to its own directory
 *       {@code _staging/<job>/attempt-<partition>-<taskId>/} and returns a {@link ShardCommitMessage}.
 *       Spark's output commit coordinator ({@link #useCommitCoordinator()}) lets exactly one attempt
 *       per partition commit, so a speculative or retried duplicate never reaches {@link #commit}.</li>
 *   <li>{@link #commit} re-checks the save mode against the dataset as it is now, checks that all
 *       tasks (and, on append, the existing dataset) agree on dtypes and shapes and, with an index,
 *       that no key repeats; only then it changes the root: (overwrite) removes the old dataset,
 *       manifest first; renames the committed shards into the root; writes the index; writes the
 *       manifest last. Until the manifest is renamed into place the old state is what readers see.</li>
 *   <li>{@link #abort} (job failure, or a failed commit) removes shards already moved by this job
 *       and the job's staging directory, which also holds every uncommitted attempt's files.</li>
 * </ol>
 */
final class SafetensorsBatchWrite implements BatchWrite {
    private final WriteOptions options;
    private final Configuration conf;
    private final Broadcast<SerializableHadoopConf> broadcastConf;
    private final boolean collectIndex;
    private final Path root;
    private final Path jobStaging;
    private final List<Path> moved = new ArrayList<>();
    private boolean committed;

    SafetensorsBatchWrite(WriteOptions options, Configuration conf, Broadcast<SerializableHadoopConf> broadcastConf,
                          boolean collectIndex, Path root, String jobId) {
        this.options = options;
        this.conf = conf;
        this.broadcastConf = broadcastConf;
        this.collectIndex = collectIndex;
        this.root = root;
        this.jobStaging = new Path(new Path(root, DatasetFiles.STAGING), jobId);
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
        return new ShardWriterFactory(options, jobStaging.toString(), collectIndex, broadcastConf);
    }

    @Override
    public boolean useCommitCoordinator() {
        return true;
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
        try {
            doCommit(messages);
        } catch (IOException e) {
            throw new UncheckedIOException("[safetensors] commit of " + root + " failed: " + e.getMessage(), e);
        }
    }

    private void doCommit(WriterCommitMessage[] messages) throws IOException {
        FileSystem fs = root.getFileSystem(conf);
        boolean exists = fs.exists(new Path(root, DatasetFiles.MANIFEST));
        SaveMode mode = options.saveMode;
        if (exists && mode == SaveMode.ErrorIfExists) {
            throw new IOException("the path already holds a committed safetensors dataset (" + DatasetFiles.MANIFEST
                    + " appeared while the job ran); use mode overwrite, append or ignore");
        }
        if (exists && mode == SaveMode.Ignore) {
            DatasetFiles.removeStaging(fs, root, jobStaging);
            committed = true;
            return;
        }
        Manifest old = exists && mode == SaveMode.Append ? Manifest.read(fs, root) : null;

        // ---- gather what the tasks wrote, in partition order
        List<ShardCommitMessage> msgs = new ArrayList<>();
        for (WriterCommitMessage m : messages) {
            if (m != null) {
                msgs.add((ShardCommitMessage) m);
            }
        }
        msgs.sort((a, b) -> Integer.compare(a.partitionId(), b.partitionId()));
        Map<String, ColumnSchema> schema = new LinkedHashMap<>();
        Map<String, Integer> schemaSource = new HashMap<>();
        for (ColumnSpec c : options.columns) {
            for (ShardCommitMessage m : msgs) {
                ColumnSchema s = m.schema().get(c.name());
                if (s == null) {
                    continue;
                }
                ColumnSchema first = schema.putIfAbsent(c.name(), s);
                if (first == null) {
                    schemaSource.put(c.name(), m.partitionId());
                } else if (!first.sameAs(s)) {
                    throw new IOException("column '" + c.name() + "' is " + first + " in partition "
                            + schemaSource.get(c.name()) + " but " + s + " in partition " + m.partitionId()
                            + "; every row of a column must have the same dtype and shape");
                }
            }
        }
        List<Shard> newShards = new ArrayList<>();
        List<IndexEntry> newIndex = new ArrayList<>();
        for (ShardCommitMessage m : msgs) {
            newShards.addAll(m.shards());
            newIndex.addAll(m.index());
        }

        // ---- append: the new data must fit the existing dataset
        List<Shard> allShards = new ArrayList<>();
        if (old != null) {
            checkAppendable(old, schema);
            for (Map.Entry<String, ColumnSchema> e : old.schema().entrySet()) {
                schema.putIfAbsent(e.getKey(), e.getValue());
            }
            allShards.addAll(old.shards());
        }
        allShards.addAll(newShards);

        // ---- index and the cross-shard duplicate check
        boolean writeIndex = collectIndex || (old != null && old.hasIndex());
        List<IndexEntry> allIndex = new ArrayList<>();
        if (writeIndex) {
            if (old != null) {
                allIndex.addAll(old.hasIndex() ? TensorIndexFile.read(conf, root)
                        : TensorIndexFile.fromShards(fs, root, old.shards(), old));
            }
            allIndex.addAll(newIndex);
            if (options.mode == WriteOptions.Mode.KV && options.duplicates == WriteOptions.Duplicates.FAIL) {
                checkNoDuplicates(allIndex);
            }
        }

        // ---- apply: from here on the root changes
        if (mode == SaveMode.Overwrite && fs.exists(root)) {
            fs.delete(new Path(root, DatasetFiles.MANIFEST), false);
            for (FileStatus st : fs.listStatus(root)) {
                if (!st.getPath().getName().equals(DatasetFiles.STAGING)) {
                    fs.delete(st.getPath(), true);
                }
            }
        }
        fs.mkdirs(root);
        for (ShardCommitMessage m : msgs) {
            for (Shard s : m.shards()) {
                Path dst = new Path(root, s.file());
                DatasetFiles.move(fs, new Path(m.stagingDir(), s.file()), dst);
                moved.add(dst);
            }
        }
        if (writeIndex) {
            TensorIndexFile.write(fs, conf, root, allIndex);
        }
        Manifest manifest = new Manifest(options.mode == WriteOptions.Mode.KV ? "kv" : "batch", schema, allShards,
                options.mode == WriteOptions.Mode.BATCH ? options.batchSize : null,
                options.mode == WriteOptions.Mode.BATCH ? options.tail.name().toLowerCase(java.util.Locale.ROOT) : null,
                options.mode == WriteOptions.Mode.KV ? options.nameCol : null,
                writeIndex);
        manifest.write(fs, root);
        committed = true;
        DatasetFiles.removeStaging(fs, root, jobStaging);
    }

    private void checkAppendable(Manifest old, Map<String, ColumnSchema> schema) throws IOException {
        String mode = options.mode == WriteOptions.Mode.KV ? "kv" : "batch";
        if (!old.writeMode().equals(mode)) {
            throw new IOException("cannot append " + mode + "-mode data to a " + old.writeMode() + "-mode dataset");
        }
        if (options.mode == WriteOptions.Mode.BATCH && !Objects.equals(old.batchSize(), options.batchSize)) {
            throw new IOException("cannot append with batch_size=" + options.batchSize + " to a dataset written with "
                    + "batch_size=" + old.batchSize());
        }
        if (options.mode == WriteOptions.Mode.BATCH
                && !options.tail.name().equalsIgnoreCase(String.valueOf(old.tailStrategy()))) {
            throw new IOException("cannot append with tail_strategy=" + options.tail.name().toLowerCase(java.util.Locale.ROOT)
                    + " to a dataset written with tail_strategy=" + old.tailStrategy());
        }
        List<String> newCols = options.columns.stream().map(ColumnSpec::name).toList();
        if (!newCols.equals(List.copyOf(old.schema().keySet()))) {
            throw new IOException("cannot append columns " + newCols + " to a dataset with columns "
                    + old.schema().keySet());
        }
        for (Map.Entry<String, ColumnSchema> e : schema.entrySet()) {
            ColumnSchema was = old.schema().get(e.getKey());
            if (was != null && !was.sameAs(e.getValue())) {
                throw new IOException("cannot append: column '" + e.getKey() + "' is " + e.getValue()
                        + " but the dataset has " + was);
            }
        }
    }

    private static void checkNoDuplicates(List<IndexEntry> index) throws IOException {
        Map<String, String> fileOf = new HashMap<>();
        for (IndexEntry e : index) {
            String id = e.column() + "\u0000" + e.tensorKey();
            String before = fileOf.putIfAbsent(id, e.fileName());
            if (before != null) {
                throw new IOException("duplicate key '" + e.tensorKey() + "' (column '" + e.column() + "') in "
                        + before + " and " + e.fileName() + "; with duplicatesStrategy=fail every key must be "
                        + "unique in the dataset");
            }
        }
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
        try {
            FileSystem fs = root.getFileSystem(conf);
            if (!committed) {
                for (Path p : moved) {
                    fs.delete(p, false);
                }
            }
            DatasetFiles.removeStaging(fs, root, jobStaging);
        } catch (IOException e) {
            throw new UncheckedIOException("[safetensors] abort of " + root + " could not clean up: " + e, e);
        }
    }

    @Override
    public String toString() {
        return "SafetensorsBatchWrite[" + root + ", " + options.saveMode + "]";
    }
}
