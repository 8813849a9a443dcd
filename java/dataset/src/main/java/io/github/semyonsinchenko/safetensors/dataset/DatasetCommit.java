package io.github.semyonsinchenko.safetensors.dataset;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.UnsupportedFileSystemException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One commit of a dataset version (format/dataset.md, "Commit protocol"): optimistic, so several
 * writers may commit to one path at once. Spark-free: the connector's job commit, plain JVM programs
 * and tests use it alike.
 *
 * <p>{@link #commit} runs these steps; a reader sees the old version until step 4 and the new one after:
 * <ol>
 *   <li>read the current version ({@link DatasetVersions#latest}) and decide the save mode against it
 *       (create fails on an existing dataset, create-or-skip stops, an append must fit);</li>
 *   <li>move each staged shard into the root ({@link #publish}). Shard names are unique, so nothing of
 *       any version is replaced, and no reader sees them: readers read what a manifest names;</li>
 *   <li>write the new version's own index (a new file, named by the new manifest only);</li>
 *   <li>create {@code _manifests/<version + 1>.json} atomically and only if absent ({@link AtomicCreate}).
 *       This is the commit. If another commit created it first, this one re-reads the dataset: an
 *       append on top of appends rebases (its shards and index entries on top of the newer version) and
 *       tries the next version, up to {@link CommitPolicy#maxAttempts} times in all, with a log line each time;
 *       anything else (an overwrite meanwhile, a changed layout or schema, an overwrite of its own) fails
 *       with a {@link CommitConflictException} naming both versions, and its shards are deleted;</li>
 *   <li>copy the entry to {@code dataset_manifest.json} (replaced in one step), checking afterwards
 *       that no newer version appeared meanwhile (if one did, its entry is copied instead), then copy
 *       the index for tools that read it by name;</li>
 *   <li>{@link #cleanUp}, never before the commit: {@link Vacuum} with the write's retention policy.</li>
 * </ol>
 * Nothing a committed version names is deleted by any step, whatever the save mode.
 */
public final class DatasetCommit {
    private static final Logger LOG = LoggerFactory.getLogger(DatasetCommit.class);

    /** What a commit does with the version it reads (the four save modes). */
    public enum Operation {
        /** ErrorIfExists: fail if the path holds a committed dataset. */
        CREATE,
        /** Ignore: commit nothing if the path holds a committed dataset. */
        CREATE_OR_SKIP,
        /** Overwrite: the new version holds only this commit's shards. */
        OVERWRITE,
        /** Append: the new version holds the current version's shards and this commit's. */
        APPEND
    }

    /**
     * A shard a task left in its staging directory.
     *
     * @param path where it is now
     * @param shard its name in the root (unique), samples and bytes
     */
    public record Staged(Path path, Shard shard) {}

    /**
     * What a write wants committed.
     *
     * @param operation the save mode
     * @param layout the write's mode and options
     * @param columns the write's serialized columns, in order
     * @param schema per-sample dtype and shape of each column as the tasks wrote it (merged across them)
     * @param shards the staged shards, in the order the manifest lists them
     * @param index one entry per new tensor, or null when the write collected none (an index is then
     *     written only if the version it builds on has one, from the new shards' headers)
     * @param uniqueKeys kv: with an index, fail if a key appears twice in the dataset
     */
    public record Change(Operation operation, Layout layout, List<String> columns, Map<String, ColumnSchema> schema,
                         List<Staged> shards, List<IndexEntry> index, boolean uniqueKeys) {
        /** Copies the lists and the schema. */
        public Change {
            columns = List.copyOf(columns);
            schema = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(schema));
            shards = List.copyOf(shards);
            index = index == null ? null : List.copyOf(index);
        }
    }

    /**
     * What a commit did.
     *
     * @param manifest the committed version's manifest, or the existing one when nothing was committed
     * @param committed false when create-or-skip met an existing dataset
     * @param attempts how many versions it tried to claim (1 without a concurrent commit)
     */
    public record Committed(Manifest manifest, boolean committed, int attempts) {
        /** {@return the version now current} */
        public long version() {
            return manifest.version();
        }
    }

    private static final Set<String> OBJECT_STORES = Set.of("s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb",
            "wasbs", "oss", "cosn", "obs");
    /** Schemes already warned about (once per JVM): their commits are not arbitrated. */
    private static final Set<String> WARNED_UNSAFE = ConcurrentHashMap.newKeySet();

    private final Configuration conf;
    private final FileSystem fs;
    private final Path root;
    private final CommitPolicy policy;
    private final String commitId;
    private final AtomicCreate claims;
    private final List<Path> published = new ArrayList<>();
    private boolean committed;
    /** Test seam: runs before each claim with the version about to be claimed (another commit may win it). */
    java.util.function.LongConsumer beforeClaim = v -> {};

    /**
     * A commit of {@code root} by job {@code commitId}.
     *
     * @param conf the Hadoop configuration
     * @param root the dataset root, qualified (scheme and authority)
     * @param policy retention, durability and attempts
     * @param commitId the committing job's id (recorded in the manifest and the index)
     * @throws IOException when the file system cannot be reached
     */
    public DatasetCommit(Configuration conf, Path root, CommitPolicy policy, String commitId) throws IOException {
        this.conf = conf;
        this.fs = root.getFileSystem(conf);
        this.root = root;
        this.policy = policy;
        this.commitId = commitId;
        this.claims = AtomicCreate.of(fs);
    }

    /** {@return the dataset's file system} */
    public FileSystem fs() {
        return fs;
    }

    /** {@return whether this commit made a version} */
    public boolean committed() {
        return committed;
    }

    /**
     * Commits {@code change}: the steps in the class comment.
     *
     * @param change what to commit
     * @return the version made (or found, for create-or-skip)
     * @throws DatasetException {@link DatasetRule#ALREADY_EXISTS}, {@link DatasetRule#APPEND_MISMATCH},
     *     {@link DatasetRule#DUPLICATE_KEY}, a {@link CommitConflictException}, or a manifest that
     *     cannot be read (never taken for an absent one); nothing of this commit is left visible
     * @throws IOException when the file system fails
     */
    public Committed commit(Change change) throws IOException {
        DatasetVersions.Snapshot base = latest();
        Operation op = change.operation();
        if (base != null && op == Operation.CREATE) {
            throw alreadyExists(base);
        }
        if (base != null && op == Operation.CREATE_OR_SKIP) {
            return new Committed(base.manifest(), false, 0);
        }
        if (base != null && op == Operation.APPEND) {
            String problem = appendProblem(base.manifest(), change);
            if (problem != null) {
                throw new DatasetException(DatasetRule.APPEND_MISMATCH, root.toString(), problem);
            }
        }
        fs.mkdirs(root);
        try {
            for (Staged s : change.shards()) {
                publish(s.path(), s.shard().file());
            }
            for (int attempt = 1; ; attempt++) {
                long version = base == null ? 1 : base.version() + 1;
                Manifest next = build(base, change, version);
                if (base != null) {
                    keepHistory(base);
                }
                CrashPoints.reached(CrashPoints.BEFORE_CLAIM);
                beforeClaim.accept(version);
                if (claim(version, next)) {
                    committed = true;
                    CrashPoints.reached(CrashPoints.CLAIMED);
                    publishManifest(new DatasetVersions.Snapshot(next, DatasetVersions.history(root, version)));
                    CrashPoints.reached(CrashPoints.AFTER_MANIFEST);
                    if (next.hasIndex()) {
                        copyIndexForTools(next);
                    }
                    if (attempt > 1) {
                        LOG.info("safetensors commit {} of {} committed version {} after {} attempts", commitId, root,
                                version, attempt);
                    }
                    return new Committed(next, true, attempt);
                }
                if (next.hasIndex()) {
                    fs.delete(new Path(root, next.indexFile()), false);
                }
                DatasetVersions.Snapshot newer = latest();
                if (newer == null || (base != null && newer.version() == base.version())) {
                    continue; // the claim raced with nothing that stuck (e.g. S3's 409): try the same version again
                }
                if (op == Operation.CREATE) {
                    throw alreadyExists(newer);
                }
                if (op == Operation.CREATE_OR_SKIP) {
                    unpublish();
                    return new Committed(newer.manifest(), false, attempt);
                }
                String why = rebaseProblem(base, newer, change);
                if (why == null && attempt >= policy.maxAttempts()) {
                    why = "gave up after " + attempt + " attempts (" + CommitPolicy.COMMIT_ATTEMPTS + "="
                            + policy.maxAttempts() + "); other appends kept committing first";
                }
                if (why != null) {
                    throw new CommitConflictException(root.toString(), base == null ? 0 : base.version(),
                            newer.version(), newer.manifest().commitId(), why);
                }
                LOG.info("safetensors commit {} of {}: version {} was taken by commit {}; rebasing this append on"
                        + " version {} (attempt {} of {})", commitId, root, version, newer.manifest().commitId(),
                        newer.version(), attempt + 1, policy.maxAttempts());
                CrashPoints.reached(CrashPoints.REBASED);
                base = newer;
                backOff(attempt);
            }
        } catch (IOException | RuntimeException | Error e) {
            if (!committed) {
                try {
                    unpublish();
                } catch (IOException cleanup) {
                    e.addSuppressed(cleanup);
                }
            }
            throw e;
        }
    }

    private DatasetVersions.Snapshot latest() throws IOException {
        DatasetVersions.Snapshot s = DatasetVersions.latest(fs, root);
        return s == null ? null : new DatasetVersions.Snapshot(Manifest.withShardOptions(fs, root, s.manifest()),
                s.file());
    }

    private DatasetException alreadyExists(DatasetVersions.Snapshot s) {
        return new DatasetException(DatasetRule.ALREADY_EXISTS, root.toString(), "version " + s.version()
                + (s.manifest().commitId() == null ? "" : " by commit " + s.manifest().commitId())
                + "; use mode overwrite, append or ignore");
    }

    /** Why {@code change} cannot append to {@code old}, or null. */
    private static String appendProblem(Manifest old, Change change) {
        String problem = AppendRules.layoutProblem(old, change.layout(), change.columns());
        return problem != null ? problem : AppendRules.schemaProblem(old, change.schema());
    }

    /** Why an append that read {@code base} cannot rebase on {@code newer}, or null when it can. */
    private static String rebaseProblem(DatasetVersions.Snapshot base, DatasetVersions.Snapshot newer, Change change) {
        if (change.operation() == Operation.OVERWRITE) {
            return "an overwrite replaces the version it read, and version " + newer.version()
                    + " is not that one; run the overwrite again to replace it";
        }
        if (base != null) {
            Set<String> kept = newer.manifest().shardFiles();
            for (String s : base.manifest().shardFiles()) {
                if (!kept.contains(s)) {
                    return "version " + newer.version() + " no longer holds " + s + " of version " + base.version()
                            + " (it was overwritten), so appending to what this commit read would bring it back or"
                            + " lose the overwrite";
                }
            }
        }
        String problem = appendProblem(newer.manifest(), change);
        return problem == null ? null : "version " + newer.version() + " changed what an append must fit: " + problem;
    }

    /** The manifest of {@code version}: {@code change} applied to {@code base}, with its own index. */
    private Manifest build(DatasetVersions.Snapshot base, Change change, long version) throws IOException {
        Manifest old = change.operation() == Operation.APPEND && base != null ? base.manifest() : null;
        Map<String, ColumnSchema> schema = new LinkedHashMap<>(change.schema());
        List<Shard> shards = new ArrayList<>();
        if (old != null) {
            for (Map.Entry<String, ColumnSchema> e : old.schema().entrySet()) {
                ColumnSchema now = schema.putIfAbsent(e.getKey(), e.getValue());
                if (now != null) {
                    // kv rows may differ in shape; so may batch rows (rows of each shape are batched apart)
                    schema.put(e.getKey(), e.getValue().mergeKv(now));
                }
            }
            // The old columns first, in their order, then any new ones.
            Map<String, ColumnSchema> ordered = new LinkedHashMap<>();
            old.schema().keySet().forEach(c -> ordered.put(c, schema.get(c)));
            ordered.putAll(schema);
            schema.clear();
            schema.putAll(ordered);
            shards.addAll(old.shards());
        }
        List<Shard> mine = change.shards().stream().map(Staged::shard).toList();
        shards.addAll(mine);
        Manifest.IndexRef index = null;
        boolean wantIndex = change.index() != null || (old != null && old.hasIndex());
        if (wantIndex) {
            List<IndexEntry> entries = new ArrayList<>();
            if (old != null) {
                entries.addAll(TensorIndexFile.of(fs, conf, root, old));
            }
            Manifest draft = Manifest.of(change.layout(), schema, mine, null, version, commitId);
            entries.addAll(change.index() != null ? change.index() : TensorIndexFile.fromShards(fs, root, mine, draft));
            if (change.uniqueKeys() && change.layout().isKv()) {
                checkNoDuplicates(entries, base);
            }
            index = TensorIndexFile.write(fs, conf, root, entries, commitId, version, policy);
            CrashPoints.reached(CrashPoints.INDEX_WRITTEN);
        }
        return Manifest.of(change.layout(), schema, shards, index, version, commitId);
    }

    private void checkNoDuplicates(List<IndexEntry> index, DatasetVersions.Snapshot base) throws DatasetException {
        Map<String, String> fileOf = new HashMap<>();
        for (IndexEntry e : index) {
            String id = e.column() + "\u0000" + e.tensorKey();
            String before = fileOf.putIfAbsent(id, e.fileName());
            if (before != null) {
                throw new DatasetException(DatasetRule.DUPLICATE_KEY, root.toString(), "key '" + e.tensorKey()
                        + "' (column '" + e.column() + "') in " + before + " and " + e.fileName()
                        + (base == null ? "" : ", appending to version " + base.version())
                        + "; with duplicatesStrategy=fail every key must be unique in the dataset");
            }
        }
    }

    /** A dataset written before the history existed gets its entry, so retention keeps its files. */
    private void keepHistory(DatasetVersions.Snapshot base) throws IOException {
        Path entry = DatasetVersions.history(root, base.version());
        if (!base.file().equals(entry) && Probe.absent(fs, entry)) {
            fs.mkdirs(entry.getParent());
            claims.create(fs, entry, base.manifest().toBytes(), policy.fsync());
        }
    }

    /** Step 4: creates the history entry of {@code version}; false when another commit did first. */
    private boolean claim(long version, Manifest manifest) throws IOException {
        Path entry = DatasetVersions.history(root, version);
        fs.mkdirs(entry.getParent());
        byte[] bytes = manifest.toBytes();
        if (!claims.arbitrates()) {
            String scheme = String.valueOf(fs.getUri().getScheme());
            if (WARNED_UNSAFE.add(scheme)) {
                LOG.warn("safetensors: {}:// offers no atomic create-if-absent, so concurrent commits to one dataset"
                        + " are not arbitrated there: run one writer per dataset at a time (format/dataset.md)",
                        scheme);
            }
        }
        if (!claims.create(fs, entry, bytes, policy.fsync())) {
            return false;
        }
        // The number was free, but was it ever taken? dataset_manifest.json at or past it means a version
        // of that number existed and its entry was vacuumed while this commit ran (orphan_age shorter than
        // the commit): this entry is on no reader's path. Withdraw it and fail rather than build on it.
        Manifest pointer = Manifest.readFile(fs, new Path(root, DatasetLayout.MANIFEST));
        if (pointer != null && pointer.version() >= version && !commitId.equals(pointer.commitId())) {
            fs.delete(entry, false);
            throw new CommitConflictException(root.toString(), version - 1, pointer.version(), pointer.commitId(),
                    "version " + version + " was committed and vacuumed while this commit ran, so its number looked"
                    + " free; orphan_age (" + policy.orphanAge() + ") must exceed the longest commit");
        }
        if (!claims.arbitrates()) {
            // Two writers may both have "created" it; the one whose bytes stayed is the one committed.
            Manifest stored = Manifest.readFile(fs, entry);
            if (stored == null || !commitId.equals(stored.commitId())) {
                throw new CommitConflictException(root.toString(), version - 1, version,
                        stored == null ? null : stored.commitId(), "both commits wrote version " + version + " on "
                        + fs.getUri().getScheme() + "://, which cannot arbitrate concurrent commits; one writer per dataset at"
                        + " a time there");
            }
        }
        return true;
    }

    /**
     * Step 5: {@code dataset_manifest.json} becomes a copy of the newest version; if a newer one
     * appears while it is written (commits finishing out of order), that one is copied instead.
     */
    private void publishManifest(DatasetVersions.Snapshot mine) throws IOException {
        DatasetVersions.Snapshot newest = DatasetVersions.forward(fs, root, mine);
        for (int i = 0; i < 100; i++) {
            byte[] bytes = Manifest.readBytes(fs, newest.file());
            replace(new Path(root, DatasetLayout.MANIFEST), bytes);
            DatasetVersions.Snapshot after = DatasetVersions.forward(fs, root, newest);
            if (after.version() == newest.version()) {
                return;
            }
            newest = after;
        }
    }

    private void copyIndexForTools(Manifest m) {
        try {
            if (DatasetVersions.forward(fs, root, new DatasetVersions.Snapshot(m, DatasetVersions.history(root,
                    m.version()))).version() == m.version()) {
                TensorIndexFile.copyForTools(fs, root, m.index(), policy);
                CrashPoints.reached(CrashPoints.INDEX_COPIED);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("safetensors commit {} of {}: version {} is committed, but the copy of its index for other tools"
                    + " ({}) failed: {}", commitId, root, m.version(), DatasetLayout.INDEX_FILE, e.toString());
        }
    }

    private void backOff(int attempt) {
        long ms = ThreadLocalRandom.current().nextLong(5, 20L * Math.min(attempt, 10));
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Step 2: moves a staged shard into the root under {@code name} (which must not exist).
     *
     * @param staged where the task left it
     * @param name its name in the root
     * @throws IOException when it cannot be moved
     */
    public void publish(Path staged, String name) throws IOException {
        Path dst = new Path(root, name);
        if (!fs.rename(staged, dst)) {
            throw new IOException("could not move " + staged + " to " + dst
                    + (fs.exists(dst) ? " (the target exists)" : fs.exists(staged) ? "" : " (the source is missing)"));
        }
        published.add(dst);
        CrashPoints.reached(CrashPoints.SHARD_RENAMED);
    }

    /**
     * Abort before the commit: deletes the shards this commit published (no version names them).
     *
     * @throws IOException when a deletion fails
     */
    public void unpublish() throws IOException {
        if (committed) {
            return;
        }
        for (Path p : published) {
            fs.delete(p, false);
        }
        published.clear();
    }

    /**
     * Step 6, after the commit: the retention of {@link Vacuum}. Failures are logged; the commit stands.
     *
     * @return what was deleted, or null when the cleanup failed
     */
    public Vacuum.Report cleanUp() {
        try {
            Vacuum.Report r = Vacuum.run(conf, root, policy, false);
            if (!r.deletions().isEmpty()) {
                LOG.info("safetensors commit of {} removed {} superseded or orphaned path(s), {} bytes", root,
                        r.deletions().size(), r.bytes());
            }
            return r;
        } catch (IOException | RuntimeException e) {
            LOG.warn("safetensors commit of {} succeeded but its cleanup failed (a later commit or vacuum retries):"
                    + " {}", root, e.toString());
            return null;
        }
    }

    /** Writes {@code bytes} as {@code target} in one visible step (see {@link CommitPolicy.ManifestWrite}). */
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
            if (policy.fsync()) {
                syncDirectory(fs, target.getParent());
            }
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
    static void renameOverwrite(FileSystem fs, Path src, Path dst, CommitPolicy policy) throws IOException {
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
