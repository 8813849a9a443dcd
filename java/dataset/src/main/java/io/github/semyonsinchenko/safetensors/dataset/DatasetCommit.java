package io.github.semyonsinchenko.safetensors.dataset;

import java.io.IOException;
import java.io.OutputStream;
import java.io.Serial;
import java.io.Serializable;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.UnsupportedFileSystemException;

/**
 * The file-system side of one job commit (format/dataset.md, "Commit protocol"). Spark-free: only
 * the Hadoop FileSystem, so {@link Vacuum} and tests use it without a session.
 *
 * <p>Steps, in this order; a reader sees the old dataset until step 4 and the new one after it:
 * <ol>
 *   <li>{@link #publish}: each staged shard is renamed into the root. Shard names are unique
 *       (UUID), so nothing of the current version is replaced and no reader sees them: readers
 *       read what the manifest names, never the listing.</li>
 *   <li>{@link #writeIndex}: the index is written to a temporary name and renamed over the old one.
 *       It carries the commit id; a reader of the old manifest ignores an index of another commit.</li>
 *   <li>{@link #commitManifest}: a copy of the new manifest goes to {@code _manifests/<version>.json}
 *       (the history the retention works from);</li>
 *   <li>then the manifest itself is replaced in one step: written to a temporary name and renamed
 *       over {@code dataset_manifest.json} (local, HDFS: an atomic replace), or, on object stores
 *       without atomic rename, written in place by one single-object put. This is the commit.</li>
 *   <li>Cleanup (never before the commit): this job's staging directory, then {@link Vacuum} with
 *       the write's retention policy. Failures here do not undo the commit.</li>
 * </ol>
 * Nothing of the old version is deleted before step 4, whatever the SaveMode.
 */
public final class DatasetCommit {
    /** How the manifest replaces the old one. */
    public enum ManifestWrite {
        /** {@link #PUT} on object stores (s3a, gs, abfs, wasb, oss, cos, obs), else {@link #RENAME}. */
        AUTO,
        /** Temporary file + rename over the manifest (atomic on local file systems and HDFS). */
        RENAME,
        /** One overwriting create: an atomic single-object put on object stores. */
        PUT
    }

    /**
     * What a commit keeps and how hard it syncs.
     *
     * @param retainVersions committed versions before the current one whose files are kept (readers
     *     that resolved them may still be reading); files of older versions are deleted by the
     *     cleanup of the next commit
     * @param orphanAge files no committed manifest names (staging of crashed or running jobs,
     *     shards of crashed commits, temporary files) are deleted once unmodified this long
     * @param fsync force shards, index and manifest to stable storage before the commit
     * @param manifestWrite how the manifest is replaced
     */
    public record Policy(int retainVersions, Duration orphanAge, boolean fsync, ManifestWrite manifestWrite)
            implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;

        public static final String RETAIN_VERSIONS = "retain_versions";
        public static final String ORPHAN_AGE = "orphan_age";
        public static final String FSYNC = "fsync";
        public static final String MANIFEST_WRITE = "manifest_write";
        public static final Set<String> OPTIONS = Set.of(RETAIN_VERSIONS, ORPHAN_AGE, FSYNC, MANIFEST_WRITE);

        public static final Policy DEFAULT = new Policy(1, Duration.ofDays(1), false, ManifestWrite.AUTO);

        public Policy {
            if (retainVersions < 0) {
                throw new IllegalArgumentException("'" + RETAIN_VERSIONS + "' must be >= 0, not " + retainVersions);
            }
            if (orphanAge.isNegative()) {
                throw new IllegalArgumentException("'" + ORPHAN_AGE + "' must not be negative, not " + orphanAge);
            }
        }

        /**
         * Reads the policy options among {@code options} (those of a write, or the CLI's vacuum flags);
         * absent ones keep their defaults.
         *
         * @param options the options, read strictly
         * @return the policy
         * @throws io.github.semyonsinchenko.safetensors.options.OptionException for a bad value
         */
        public static Policy parse(io.github.semyonsinchenko.safetensors.options.Options options) {
            return new Policy(
                    options.intValue(RETAIN_VERSIONS, DEFAULT.retainVersions, 0, Integer.MAX_VALUE, "versions"),
                    options.duration(ORPHAN_AGE, DEFAULT.orphanAge),
                    options.bool(FSYNC, DEFAULT.fsync),
                    options.choice(MANIFEST_WRITE, DEFAULT.manifestWrite,
                            io.github.semyonsinchenko.safetensors.options.Options.lowerCaseNames(ManifestWrite.class)));
        }
    }

    private static final Set<String> OBJECT_STORES = Set.of("s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb",
            "wasbs", "oss", "cosn", "obs");

    private final FileSystem fs;
    private final Path root;
    private final Policy policy;
    private final String commitId;
    private final List<Path> published = new ArrayList<>();
    private boolean committed;

    public DatasetCommit(Configuration conf, Path root, Policy policy, String commitId) throws IOException {
        this.fs = root.getFileSystem(conf);
        this.root = root;
        this.policy = policy;
        this.commitId = commitId;
    }

    public FileSystem fs() {
        return fs;
    }

    /** The version the next manifest gets: one more than the current one (or than the history's newest). */
    public long nextVersion(Manifest current) throws IOException {
        if (current != null) {
            return current.version() + 1;
        }
        long newest = 0;
        Path history = new Path(root, DatasetLayout.HISTORY);
        if (fs.exists(history)) {
            for (FileStatus st : fs.listStatus(history)) {
                newest = Math.max(newest, DatasetLayout.historyVersion(st.getPath().getName()).orElse(0));
            }
        }
        return newest + 1;
    }

    /** Step 1: moves a staged shard into the root under {@code name} (which must not exist). */
    public void publish(Path staged, String name) throws IOException {
        Path dst = new Path(root, name);
        if (!fs.rename(staged, dst)) {
            throw new IOException("could not move " + staged + " to " + dst
                    + (fs.exists(dst) ? " (the target exists)" : fs.exists(staged) ? "" : " (the source is missing)"));
        }
        published.add(dst);
        CrashPoints.reached(CrashPoints.SHARD_RENAMED);
    }

    /** Step 2: replaces the index; returns its path relative to the root, for the manifest. */
    public String writeIndex(Configuration conf, List<IndexEntry> entries) throws IOException {
        String file = TensorIndexFile.write(fs, conf, root, entries, commitId, policy);
        CrashPoints.reached(CrashPoints.INDEX_WRITTEN);
        return file;
    }

    /**
     * Steps 3 and 4: the history copy, then the manifest replace: the commit. {@code previous} is
     * the manifest being replaced (or null); a dataset written before the history existed gets
     * its entry first, so the retention keeps its files like any previous version's.
     */
    public void commitManifest(Manifest manifest, Manifest previous) throws IOException {
        if (!commitId.equals(manifest.commitId())) {
            throw new IllegalArgumentException("manifest of commit " + manifest.commitId() + " given to " + commitId);
        }
        Path historyDir = new Path(root, DatasetLayout.HISTORY);
        fs.mkdirs(historyDir);
        if (previous != null) {
            Path before = new Path(historyDir, DatasetLayout.historyName(previous.version()));
            if (!fs.exists(before)) {
                replace(before, previous.toBytes());
            }
        }
        byte[] json = manifest.toBytes();
        replace(new Path(historyDir, DatasetLayout.historyName(manifest.version())), json);
        CrashPoints.reached(CrashPoints.BEFORE_MANIFEST);
        replace(new Path(root, DatasetLayout.MANIFEST), json);
        committed = true;
        if (policy.fsync()) {
            syncDirectory(fs, root);
        }
        CrashPoints.reached(CrashPoints.AFTER_MANIFEST);
    }

    public boolean committed() {
        return committed;
    }

    /** Abort before the commit: deletes the shards this commit published (nothing names them). */
    public void unpublish() throws IOException {
        if (committed) {
            return;
        }
        for (Path p : published) {
            fs.delete(p, false);
        }
        published.clear();
    }

    /** Writes {@code bytes} as {@code target} in one visible step (see {@link ManifestWrite}). */
    private void replace(Path target, byte[] bytes) throws IOException {
        if (usePut()) {
            try (FSDataOutputStream out = fs.create(target, true)) {
                out.write(bytes);
                if (policy.fsync()) {
                    out.hsync();
                }
            }
            return;
        }
        Path tmp = new Path(target.getParent(), DatasetLayout.tempName(target.getName()));
        try {
            try (FSDataOutputStream out = fs.create(tmp, false)) {
                out.write(bytes);
                if (policy.fsync()) {
                    out.hsync();
                }
            }
            renameOverwrite(fs, tmp, target, policy);
        } finally {
            fs.delete(tmp, false);
        }
    }

    private boolean usePut() {
        return switch (policy.manifestWrite()) {
            case PUT -> true;
            case RENAME -> false;
            case AUTO -> OBJECT_STORES.contains(String.valueOf(fs.getUri().getScheme()).toLowerCase(Locale.ROOT));
        };
    }

    /** Renames {@code src} over {@code dst} in one step where the file system can (local, HDFS). */
    static void renameOverwrite(FileSystem fs, Path src, Path dst, Policy policy) throws IOException {
        if (isLocal(fs)) {
            // rename(2) replaces the target atomically.
            java.nio.file.Files.move(java.nio.file.Path.of(fs.makeQualified(src).toUri()),
                    java.nio.file.Path.of(fs.makeQualified(dst).toUri()),
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            return;
        }
        try {
            FileContext.getFileContext(fs.getUri(), fs.getConf()).rename(src, dst, Options.Rename.OVERWRITE);
        } catch (UnsupportedFileSystemException e) {
            // No rename-with-overwrite here: never delete-then-rename (a window without a manifest);
            // copy the bytes with one overwriting create instead.
            byte[] bytes;
            try (var in = fs.open(src)) {
                bytes = in.readAllBytes();
            }
            try (OutputStream out = fs.create(dst, true)) {
                out.write(bytes);
            }
        }
    }

    private static boolean isLocal(FileSystem fs) {
        return "file".equals(fs.getUri().getScheme());
    }

    /** Forces a closed local file to disk (other file systems: their close() is what they offer). */
    static void syncFile(FileSystem fs, Path file) throws IOException {
        if (isLocal(fs)) {
            try (FileChannel ch = FileChannel.open(java.nio.file.Path.of(fs.makeQualified(file).toUri()),
                    StandardOpenOption.WRITE)) {
                ch.force(true);
            }
        }
    }

    /** Makes renames into a local directory durable (fsync of the directory itself). */
    static void syncDirectory(FileSystem fs, Path dir) throws IOException {
        if (isLocal(fs)) {
            try (FileChannel ch = FileChannel.open(java.nio.file.Path.of(fs.makeQualified(dir).toUri()),
                    StandardOpenOption.READ)) {
                ch.force(true);
            }
        }
    }
}
