package io.github.semyonsinchenko.safetensors.dataset;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes what a dataset no longer needs, under a {@link CommitPolicy} (format/dataset.md, "Retention
 * and vacuum"). Run by every commit after it, and on request ({@link #run}, the CLI's
 * {@code safetensors vacuum}); a dry run only reports.
 *
 * <ul>
 *   <li>Kept: every file the current version or one of the {@code retainVersions} versions before it
 *       names, and their history entries. Names are compared normalised
 *       ({@link DatasetLayout#relativePath}: {@code ./part-1} is {@code part-1}).</li>
 *   <li>{@link Reason#SUPERSEDED}: a shard or index only older versions name. Deleted at once: a file
 *       a version no longer names is never named again (each version builds on the one before).</li>
 *   <li>{@link Reason#ORPHAN_SHARD}, {@link Reason#STAGING}, {@link Reason#TEMPORARY},
 *       {@link Reason#STALE_INDEX}: files no committed version names (crashed jobs, commits that lost,
 *       or a commit still running). Deleted once unmodified for {@code orphanAge}, which must therefore
 *       exceed the longest time a writer takes from writing a shard to committing it.</li>
 *   <li>{@link Reason#HISTORY}: history entries older than the retained versions and than
 *       {@code dataset_manifest.json}'s version, once unmodified for {@code orphanAge} (an entry keeps
 *       its version number taken), after their files.</li>
 * </ul>
 * A retained version whose manifest cannot be read stops the vacuum: what it names is unknown, so
 * nothing is known to be safe. Only names this format writes are touched; other files are left alone.
 */
public final class Vacuum {
    private static final Logger LOG = LoggerFactory.getLogger(Vacuum.class);

    private Vacuum() {}

    /** Why a path is (or would be) deleted. */
    public enum Reason {
        /** Named only by versions older than the retained ones. */
        SUPERSEDED,
        /** A shard no committed version names. */
        ORPHAN_SHARD,
        /** A job's staging directory. */
        STAGING,
        /** A temporary file of an interrupted write. */
        TEMPORARY,
        /** An index no committed version names, or the tools' copy of a dataset that has no index now. */
        STALE_INDEX,
        /** A history entry older than the retained versions. */
        HISTORY
    }

    /**
     * One deletion.
     *
     * @param path the path
     * @param reason why
     * @param bytes the bytes it frees
     */
    public record Deletion(String path, Reason reason, long bytes) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%-19s %,15d  %s", reason, bytes, path);
        }
    }

    /**
     * What a vacuum deleted (or, in a dry run, would delete).
     *
     * @param root the dataset root
     * @param version the version that was current
     * @param dryRun whether nothing was deleted
     * @param deletions every deletion
     */
    public record Report(String root, long version, boolean dryRun, List<Deletion> deletions) {
        /** {@return the bytes freed} */
        public long bytes() {
            return deletions.stream().mapToLong(Deletion::bytes).sum();
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder();
            sb.append(String.format(Locale.ROOT, "%s (version %d): %s %d path(s), %,d bytes%n", root, version,
                    dryRun ? "would delete" : "deleted", deletions.size(), bytes()));
            for (Deletion d : deletions) {
                sb.append("  ").append(d).append(System.lineSeparator());
            }
            return sb.toString();
        }
    }

    /**
     * Vacuums the dataset at {@code root}.
     *
     * @param conf the Hadoop configuration
     * @param root the dataset root
     * @param policy what to retain
     * @param dryRun report only, delete nothing
     * @return what was (or would be) deleted
     * @throws IOException when the path holds no committed dataset, a retained version cannot be read, or
     *     the file system fails
     */
    public static Report run(Configuration conf, Path root, CommitPolicy policy, boolean dryRun) throws IOException {
        FileSystem fs = root.getFileSystem(conf);
        return clean(fs, fs.makeQualified(root), policy, dryRun, System.currentTimeMillis());
    }

    /** A plan: what to delete, computed against one current version (history entries last). */
    private record Plan(long version, List<Deletion> files, List<Deletion> history) {}

    static Report clean(FileSystem fs, Path root, CommitPolicy policy, boolean dryRun, long now) throws IOException {
        Plan plan = plan(fs, root, policy, now);
        // A commit that finished while this was listing may name files that looked orphaned: plan again.
        for (int i = 0; i < 3; i++) {
            DatasetVersions.Snapshot again = DatasetVersions.latest(fs, root);
            if (again != null && again.version() == plan.version()) {
                break;
            }
            plan = plan(fs, root, policy, now);
        }
        List<Deletion> out = new ArrayList<>();
        for (List<Deletion> group : List.of(plan.files(), plan.history())) {
            for (Deletion d : group) {
                if (!dryRun) {
                    fs.delete(new Path(d.path()), true);
                    CrashPoints.reached(CrashPoints.CLEANUP_DELETED);
                }
                out.add(d);
            }
        }
        if (!dryRun) {
            Path staging = new Path(root, DatasetLayout.STAGING);
            if (list(fs, staging).isEmpty() && !Probe.absent(fs, staging)) {
                fs.delete(staging, false);
            }
        }
        return new Report(root.toString(), plan.version(), dryRun, List.copyOf(out));
    }

    private static Plan plan(FileSystem fs, Path root, CommitPolicy policy, long now) throws IOException {
        DatasetVersions.Snapshot current = DatasetVersions.latest(fs, root);
        if (current == null) {
            throw new IOException(root + ": no " + DatasetLayout.MANIFEST + "; without a committed version nothing is"
                    + " known to be safe to delete");
        }
        long v = current.version();
        long oldestRetained = v - policy.retainVersions();
        long orphanBefore = now - policy.orphanAge().toMillis();

        Set<String> keep = new HashSet<>(current.manifest().files());
        Set<String> superseded = new HashSet<>();
        boolean indexRetained = current.manifest().hasIndex();
        TreeMap<Long, FileStatus> history = new TreeMap<>();
        Path historyDir = new Path(root, DatasetLayout.HISTORY);
        for (FileStatus st : list(fs, historyDir)) {
            DatasetLayout.historyVersion(st.getPath().getName()).ifPresent(h -> history.put(h, st));
        }
        for (var e : history.headMap(v, false).entrySet()) {
            if (e.getKey() >= oldestRetained) {
                // Retained: its files must be known, or nothing is safe to delete.
                Manifest old = Manifest.readFile(fs, e.getValue().getPath());
                if (old != null) {
                    keep.addAll(old.files());
                    indexRetained |= old.hasIndex();
                }
                continue;
            }
            try {
                Manifest old = Manifest.readFile(fs, e.getValue().getPath());
                if (old != null) {
                    superseded.addAll(old.files());
                }
            } catch (IOException unreadable) {
                // Not retained anyway: its files fall under the orphan rule.
                LOG.warn("safetensors vacuum of {}: skipping unreadable history entry {} ({})", root,
                        e.getValue().getPath(), unreadable.getMessage());
            }
        }
        superseded.removeAll(keep);

        List<Deletion> files = new ArrayList<>();
        for (FileStatus st : list(fs, root)) {
            String name = st.getPath().getName();
            if (st.isDirectory()) {
                switch (name) {
                    case DatasetLayout.STAGING -> {
                        for (FileStatus job : list(fs, st.getPath())) {
                            long[] newestAndBytes = newestAndBytes(fs, job);
                            if (newestAndBytes[0] < orphanBefore) {
                                files.add(new Deletion(job.getPath().toString(), Reason.STAGING, newestAndBytes[1]));
                            }
                        }
                    }
                    case DatasetLayout.INDEX_VERSIONS -> {
                        for (FileStatus c : list(fs, st.getPath())) {
                            String rel = DatasetLayout.INDEX_VERSIONS + "/" + c.getPath().getName();
                            boolean old = c.getModificationTime() < orphanBefore;
                            if (keep.contains(rel) || !c.isFile()) {
                                continue;
                            }
                            if (superseded.contains(rel)) {
                                files.add(new Deletion(c.getPath().toString(), Reason.SUPERSEDED, c.getLen()));
                            } else if (DatasetLayout.indexVersion(c.getPath().getName()).isPresent() && old) {
                                files.add(new Deletion(c.getPath().toString(), Reason.STALE_INDEX, c.getLen()));
                            } else if (DatasetLayout.isTempName(c.getPath().getName()) && old) {
                                files.add(new Deletion(c.getPath().toString(), Reason.TEMPORARY, c.getLen()));
                            }
                        }
                    }
                    case DatasetLayout.INDEX -> {
                        long[] newestAndBytes = newestAndBytes(fs, st);
                        if (!indexRetained && newestAndBytes[0] < orphanBefore) {
                            files.add(new Deletion(st.getPath().toString(), Reason.STALE_INDEX, newestAndBytes[1]));
                        } else {
                            for (FileStatus c : list(fs, st.getPath())) {
                                if (DatasetLayout.isTempName(c.getPath().getName())
                                        && c.getModificationTime() < orphanBefore) {
                                    files.add(new Deletion(c.getPath().toString(), Reason.TEMPORARY, c.getLen()));
                                }
                            }
                        }
                    }
                    default -> {
                        // not ours
                    }
                }
                continue;
            }
            if (keep.contains(name) || name.equals(DatasetLayout.MANIFEST)) {
                continue;
            }
            boolean old = st.getModificationTime() < orphanBefore;
            if (name.equals(DatasetLayout.INDEX)) {
                if (!indexRetained && old) {
                    files.add(new Deletion(st.getPath().toString(), Reason.STALE_INDEX, st.getLen()));
                }
            } else if (superseded.contains(name)) {
                files.add(new Deletion(st.getPath().toString(), Reason.SUPERSEDED, st.getLen()));
            } else if (DatasetLayout.isShardName(name)) {
                if (old) {
                    files.add(new Deletion(st.getPath().toString(), Reason.ORPHAN_SHARD, st.getLen()));
                }
            } else if (DatasetLayout.isTempName(name) && old) {
                files.add(new Deletion(st.getPath().toString(), Reason.TEMPORARY, st.getLen()));
            }
        }
        // A history entry's name is what makes its version number taken: deleted too early, a writer that
        // read an old version could claim the number again. So an entry goes only when it is below the
        // retained versions and below dataset_manifest.json's version (readers start there), and has been
        // unmodified for orphan_age, which exceeds any commit's duration.
        Manifest pointer = Manifest.readFile(fs, new Path(root, DatasetLayout.MANIFEST));
        long below = pointer == null ? -1 : Math.min(oldestRetained, pointer.version());
        List<Deletion> entries = new ArrayList<>();
        for (var e : history.headMap(below, false).entrySet()) {
            if (e.getValue().getModificationTime() < orphanBefore) {
                entries.add(new Deletion(e.getValue().getPath().toString(), Reason.HISTORY, e.getValue().getLen()));
            }
        }
        for (FileStatus st : list(fs, historyDir)) {
            if (DatasetLayout.isTempName(st.getPath().getName()) && st.getModificationTime() < orphanBefore) {
                entries.add(new Deletion(st.getPath().toString(), Reason.TEMPORARY, st.getLen()));
            }
        }
        return new Plan(v, files, entries);
    }

    private static List<FileStatus> list(FileSystem fs, Path dir) throws IOException {
        try {
            return List.of(fs.listStatus(dir));
        } catch (FileNotFoundException e) {
            return List.of();
        }
    }

    /** The newest modification time under a path (itself included) and its total bytes. */
    private static long[] newestAndBytes(FileSystem fs, FileStatus st) throws IOException {
        long newest = st.getModificationTime();
        long bytes = 0;
        if (st.isDirectory()) {
            RemoteIterator<LocatedFileStatus> it = fs.listFiles(st.getPath(), true);
            while (it.hasNext()) {
                LocatedFileStatus f = it.next();
                newest = Math.max(newest, f.getModificationTime());
                bytes += f.getLen();
            }
        } else {
            bytes = st.getLen();
        }
        return new long[] {newest, bytes};
    }
}
