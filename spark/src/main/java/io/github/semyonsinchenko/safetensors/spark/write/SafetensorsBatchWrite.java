package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.dataset.ColumnSchema;
import io.github.semyonsinchenko.safetensors.dataset.CrashPoints;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.dataset.DatasetCommit;
import io.github.semyonsinchenko.safetensors.dataset.IndexEntry;
import io.github.semyonsinchenko.safetensors.dataset.Shard;
import io.github.semyonsinchenko.safetensors.spark.entry.CheckedWriterFactory;
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
 *   <li>{@link #commit} checks that all tasks agree on dtypes and shapes, then hands the shards to
 *       the dataset module's {@link DatasetCommit}: it decides the save mode against the dataset as it
 *       is now, publishes the shards, writes the version's index and claims the next version (the
 *       commit point), rebasing an append on appends other writers committed meanwhile. Nothing a
 *       committed version names is deleted, whatever the mode: superseded files go later, by the
 *       retention rules of {@code Vacuum}.</li>
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
        // Wrapped so that an executor below JDK 25 says so (see CheckedInputPartition).
        return new CheckedWriterFactory(new ShardWriterFactory(options, jobStaging.toString(), collectIndex,
                broadcastConf));
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

        // ---- what the tasks wrote, in partition order
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
        List<DatasetCommit.Staged> staged = new ArrayList<>();
        List<IndexEntry> index = collectIndex ? new ArrayList<>() : null;
        for (ShardCommitMessage m : msgs) {
            for (Shard s : m.shards()) {
                staged.add(new DatasetCommit.Staged(new Path(m.stagingDir(), s.file()), s));
            }
            if (index != null) {
                index.addAll(m.index());
            }
        }
        DatasetCommit.Change change = new DatasetCommit.Change(operation(options.saveMode), options.layout(),
                options.columns.stream().map(ColumnSpec::name).toList(), schema, staged, index,
                options.mode == WriteOptions.Mode.KV && options.duplicates == WriteOptions.Duplicates.FAIL);
        DatasetCommit.Committed done = commit.commit(change);
        if (!done.committed()) {
            removeStaging(commit.fs()); // ignore: a dataset appeared while the job ran
            return;
        }
        try {
            removeStaging(commit.fs());
            CrashPoints.reached(CrashPoints.STAGING_REMOVED);
        } catch (IOException | RuntimeException e) {
            LOG.warn("safetensors commit of {} succeeded but removing its staging directory failed (a later commit or"
                    + " vacuum retries): {}", root, e.toString());
        }
        commit.cleanUp();
    }

    private static DatasetCommit.Operation operation(SaveMode mode) {
        return switch (mode) {
            case ErrorIfExists -> DatasetCommit.Operation.CREATE;
            case Ignore -> DatasetCommit.Operation.CREATE_OR_SKIP;
            case Overwrite -> DatasetCommit.Operation.OVERWRITE;
            case Append -> DatasetCommit.Operation.APPEND;
        };
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

    @Override
    public void abort(WriterCommitMessage[] messages) {
        try {
            if (commit != null && !commit.committed()) {
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
