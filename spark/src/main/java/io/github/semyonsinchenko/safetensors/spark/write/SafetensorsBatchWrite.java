package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.dataset.AppendRules;
import io.github.semyonsinchenko.safetensors.dataset.ColumnSchema;
import io.github.semyonsinchenko.safetensors.dataset.CrashPoints;
import io.github.semyonsinchenko.safetensors.dataset.DatasetCommit;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.dataset.IndexEntry;
import io.github.semyonsinchenko.safetensors.dataset.Manifest;
import io.github.semyonsinchenko.safetensors.dataset.Shard;
import io.github.semyonsinchenko.safetensors.dataset.TensorIndexFile;
import io.github.semyonsinchenko.safetensors.dataset.Vacuum;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.util.SerializableConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 *       that no key repeats; then {@link DatasetCommit} publishes the shards, replaces the index and
 *       replaces the manifest (the commit point). Nothing of the old version is deleted before that,
 *       whatever the mode: superseded files go later, by the retention rules of {@link Vacuum}.</li>
 *   <li>{@link #abort} (job failure, or a failed commit) removes shards already published by this
 *       job and the job's staging directory, which also holds every uncommitted attempt's files.</li>
 * </ol>
 */
final class SafetensorsBatchWrite implements BatchWrite {
    private static final Logger LOG = LoggerFactory.getLogger(SafetensorsBatchWrite.class);

    private final WriteOptions options;
    private final Configuration conf;
    private final Broadcast<SerializableConfiguration> broadcastConf;
    private final boolean collectIndex;
    private final Path root;
    private final Path jobStaging;
    private final String jobId;
    private DatasetCommit commit;
    private boolean committed;

    SafetensorsBatchWrite(WriteOptions options, Configuration conf, Broadcast<SerializableConfiguration> broadcastConf,
                          boolean collectIndex, Path root, String jobId) {
        this.options = options;
        this.conf = conf;
        this.broadcastConf = broadcastConf;
        this.collectIndex = collectIndex;
        this.root = root;
        this.jobId = jobId;
        this.jobStaging = new Path(new Path(root, DatasetLayout.STAGING), jobId);
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
        CrashPoints.reached(CrashPoints.COMMIT_START);
        commit = new DatasetCommit(conf, root, options.commitPolicy, jobId);
        FileSystem fs = commit.fs();
        Manifest current = Manifest.read(fs, root);
        boolean exists = current != null;
        SaveMode mode = options.saveMode;
        if (exists && mode == SaveMode.ErrorIfExists) {
            throw new IOException("the path already holds a committed safetensors dataset (" + DatasetLayout.MANIFEST
                    + " appeared while the job ran); use mode overwrite, append or ignore");
        }
        if (exists && mode == SaveMode.Ignore) {
            removeStaging(fs);
            committed = true;
            return;
        }
        Manifest old = mode == SaveMode.Append ? current : null;

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
                } else if (first.dtype().equals(s.dtype())) {
                    schema.put(c.name(), first.mergeKv(s)); // rows may differ in shape (batch: batched apart)
                } else {
                    throw new IOException("column '" + c.name() + "' is " + first + " in partition "
                            + schemaSource.get(c.name()) + " but " + s + " in partition " + m.partitionId()
                            + "; every row of a column must have the same dtype");
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
                ColumnSchema now = schema.putIfAbsent(e.getKey(), e.getValue());
                if (now != null) {
                    schema.put(e.getKey(), e.getValue().mergeKv(now));
                }
            }
            allShards.addAll(old.shards());
        }
        allShards.addAll(newShards);

        // ---- index and the cross-shard duplicate check
        boolean writeIndex = collectIndex || (old != null && old.hasIndex());
        List<IndexEntry> allIndex = new ArrayList<>();
        if (writeIndex) {
            if (old != null) {
                allIndex.addAll(TensorIndexFile.of(fs, conf, root, old));
            }
            allIndex.addAll(newIndex);
            if (options.mode == WriteOptions.Mode.KV && options.duplicates == WriteOptions.Duplicates.FAIL) {
                checkNoDuplicates(allIndex);
            }
        }

        // ---- apply (DatasetCommit): readers see the current version until the manifest is replaced
        fs.mkdirs(root);
        for (ShardCommitMessage m : msgs) {
            for (Shard s : m.shards()) {
                commit.publish(new Path(m.stagingDir(), s.file()), s.file());
            }
        }
        String indexFile = writeIndex ? commit.writeIndex(conf, allIndex) : null;
        boolean batch = options.mode == WriteOptions.Mode.BATCH;
        Manifest manifest = Manifest.of(batch ? "batch" : "kv", schema, allShards,
                batch ? options.batchSize : null,
                batch ? options.tail.name().toLowerCase(java.util.Locale.ROOT) : null,
                batch ? options.packBatches : null,
                batch ? null : options.nameCol, batch ? null : options.kvSeparator,
                indexFile, commit.nextVersion(current), jobId);
        commit.commitManifest(manifest, current);
        committed = true;
        cleanUp(fs);
    }

    /** After the commit: this job's staging, then the retention (failures are logged, the commit stands). */
    private void cleanUp(FileSystem fs) {
        try {
            removeStaging(fs);
            CrashPoints.reached(CrashPoints.STAGING_REMOVED);
            Vacuum.Report r = Vacuum.run(conf, root, options.commitPolicy, false);
            if (!r.deletions().isEmpty()) {
                LOG.info("safetensors commit of {} removed {} superseded or orphaned path(s), {} bytes", root,
                        r.deletions().size(), r.bytes());
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("safetensors commit of {} succeeded but its cleanup failed (a later commit or vacuum retries):"
                    + " {}", root, e.toString());
        }
    }

    /** Deletes the job's staging directory, and {@code _staging} itself once no other job uses it. */
    private void removeStaging(FileSystem fs) throws IOException {
        fs.delete(jobStaging, true);
        Path staging = jobStaging.getParent();
        try {
            if (fs.listStatus(staging).length == 0) {
                fs.delete(staging, false);
            }
        } catch (java.io.FileNotFoundException ignored) {
            // already gone
        }
    }

    private void checkAppendable(Manifest old, Map<String, ColumnSchema> schema) throws IOException {
        String problem = options.appendProblem(old);
        if (problem == null) {
            problem = AppendRules.schemaProblem(old, schema);
        }
        if (problem != null) {
            throw new IOException("cannot append to " + root + ": " + problem);
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
            if (commit != null && !committed) {
                commit.unpublish();
            }
            removeStaging(root.getFileSystem(conf));
        } catch (IOException e) {
            throw new UncheckedIOException("[safetensors] abort of " + root + " could not clean up: " + e, e);
        }
    }

    @Override
    public String toString() {
        return "SafetensorsBatchWrite[" + root + ", " + options.saveMode + "]";
    }
}
