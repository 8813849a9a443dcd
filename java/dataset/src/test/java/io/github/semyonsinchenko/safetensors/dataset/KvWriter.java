package io.github.semyonsinchenko.safetensors.dataset;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * A writer of kv datasets without Spark, as a task and a job commit would: each row {@code key} has one
 * column {@code x}, an F32 vector {@code [a, b]}; shards are written to a staging directory with the
 * core writer (any Hadoop file system) and committed with {@link DatasetCommit}. Used by the commit
 * tests and by the child processes of the concurrency tests.
 */
public final class KvWriter {
    private final Configuration conf;
    private final Path root;
    private final CommitPolicy policy;
    private final boolean index;

    public KvWriter(Configuration conf, Path root, CommitPolicy policy, boolean index) {
        this.conf = conf;
        this.root = root;
        this.policy = policy;
        this.index = index;
    }

    /** One row. */
    public record Row(String key, float a, float b) {}

    public static final String COLUMN = "x";
    public static final String SEPARATOR = "__";

    /** The bytes of a shard holding {@code rows}, as the Spark writer lays out a kv shard. */
    static byte[] shardBytes(List<Row> rows) throws IOException {
        SafetensorsWriter w = new SafetensorsWriter().metadata(Manifest.META_WRITE_MODE, Layout.KV)
                .metadata(Manifest.META_NAME_COL, "key").metadata(Manifest.META_KV_SEPARATOR, SEPARATOR);
        for (Row r : rows) {
            w.add(TensorNames.kv(r.key(), COLUMN, SEPARATOR), Dtype.F32, new long[] {2}, new float[] {r.a(), r.b()});
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        w.write(out);
        return out.toByteArray();
    }

    /** Stages one shard per list of rows and returns the change that commits them. */
    public DatasetCommit.Change stage(DatasetCommit.Operation op, String jobId, List<List<Row>> shards)
            throws IOException {
        FileSystem fs = root.getFileSystem(conf);
        Path staging = new Path(new Path(root, DatasetLayout.STAGING), jobId);
        List<DatasetCommit.Staged> staged = new ArrayList<>();
        List<IndexEntry> entries = index ? new ArrayList<>() : null;
        UUID uuid = UUID.randomUUID();
        for (int i = 0; i < shards.size(); i++) {
            String name = DatasetLayout.shardName(i, 0, uuid);
            Path p = new Path(staging, name);
            byte[] bytes = shardBytes(shards.get(i));
            try (FSDataOutputStream out = fs.create(p, false)) {
                out.write(bytes);
            }
            staged.add(new DatasetCommit.Staged(p, new Shard(name, shards.get(i).size(), bytes.length)));
            if (entries != null) {
                Header h = Header.read(new java.io.ByteArrayInputStream(bytes), bytes.length, name);
                for (TensorInfo t : h.tensors()) {
                    TensorNames.Kv kv = TensorNames.parseKv(t.name(), List.of(COLUMN), SEPARATOR);
                    entries.add(new IndexEntry(kv.key(), kv.column(), t.name(), name, t.shape(), t.dtype().name(),
                            h.dataOffset() + t.begin(), h.dataOffset() + t.end()));
                }
            }
        }
        return new DatasetCommit.Change(op, Layout.kv("key", SEPARATOR), List.of(COLUMN),
                Map.of(COLUMN, new ColumnSchema("F32", new long[] {2})), staged, entries, true);
    }

    /** Commits {@code shards} with {@code op}; the job's staging directory is removed afterwards. */
    public DatasetCommit.Committed commit(DatasetCommit.Operation op, List<List<Row>> shards) throws IOException {
        String jobId = "job-" + UUID.randomUUID();
        DatasetCommit commit = new DatasetCommit(conf, root, policy, jobId);
        return run(commit, stage(op, jobId, shards), jobId);
    }

    /** Runs a prepared commit, then removes the job's staging and applies the retention, like the connector. */
    public DatasetCommit.Committed run(DatasetCommit commit, DatasetCommit.Change change, String jobId)
            throws IOException {
        FileSystem fs = root.getFileSystem(conf);
        try {
            DatasetCommit.Committed done = commit.commit(change);
            if (done.committed()) {
                commit.cleanUp();
            }
            return done;
        } finally {
            fs.delete(new Path(new Path(root, DatasetLayout.STAGING), jobId), true);
        }
    }

    /** Every row of the dataset's current version, by reading each shard it names (no index). */
    public static Map<String, float[]> read(Configuration conf, Path root) throws IOException {
        FileSystem fs = root.getFileSystem(conf);
        Manifest m = Manifest.read(fs, root);
        Map<String, float[]> out = new LinkedHashMap<>();
        if (m == null) {
            return out;
        }
        for (Shard s : m.shards()) {
            Path p = new Path(root, s.file());
            byte[] bytes;
            try (InputStream in = fs.open(p)) {
                bytes = in.readAllBytes();
            }
            Header h = Header.read(new java.io.ByteArrayInputStream(bytes), bytes.length, p.toString());
            for (TensorInfo t : h.tensors()) {
                TensorNames.Kv kv = TensorNames.parseKv(t.name(), List.of(COLUMN), SEPARATOR);
                ByteBuffer b = ByteBuffer.wrap(bytes, (int) (h.dataOffset() + t.begin()), 8)
                        .order(ByteOrder.LITTLE_ENDIAN);
                if (out.put(kv.key(), new float[] {b.getFloat(), b.getFloat()}) != null) {
                    throw new IOException("key " + kv.key() + " appears twice in version " + m.version());
                }
            }
        }
        return out;
    }

    /** Writes raw bytes to a file (tests that damage metadata). */
    static void overwrite(FileSystem fs, Path p, byte[] bytes) throws IOException {
        try (OutputStream out = fs.create(p, true)) {
            out.write(bytes);
        }
    }
}
