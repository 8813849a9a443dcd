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

/**
 * Removes what a dataset no longer needs, under a {@link DatasetCommit.Policy} (format/dataset.md,
 * "Retention and vacuum"). Run by every commit after its manifest is in place, and on request
 * ({@link #run}, {@link VacuumCommand}); a dry run only reports.
 *
 * <ul>
 *   <li>Kept: every file the current manifest or one of the {@code retainVersions} versions before
 *       it names, and their history entries.</li>
 *   <li>{@link Reason#SUPERSEDED}: a shard only older versions name. Deleted at once.</li>
 *   <li>{@link Reason#ORPHAN_SHARD}, {@link Reason#STAGING}, {@link Reason#TEMPORARY},
 *       {@link Reason#UNCOMMITTED_HISTORY}, {@link Reason#STALE_INDEX}: files no committed version
 *       names (crashed jobs, or a job still running). Deleted once unmodified for {@code orphanAge}.</li>
 *   <li>{@link Reason#HISTORY}: history entries older than the retained versions, after their files.</li>
 * </ul>
 * Only names this connector writes are touched; other files in the directory are left alone.
 */
public final class Vacuum {
    private Vacuum() {}

    /** Why a path is (or would be) deleted. */
    public enum Reason { SUPERSEDED, ORPHAN_SHARD, STAGING, TEMPORARY, UNCOMMITTED_HISTORY, STALE_INDEX, HISTORY }

    /** One deletion: the path, why, and the bytes it frees. */
    public record Deletion(String path, Reason reason, long bytes) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%-19s %,15d  %s", reason, bytes, path);
        }
    }

    /** What a vacuum deleted (or, in a dry run, would delete). */
    public record Report(String root, long version, boolean dryRun, List<Deletion> deletions) {
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

    /** Vacuums the dataset at {@code root}; with {@code dryRun} nothing is deleted. */
    public static Report run(Configuration conf, Path root, DatasetCommit.Policy policy, boolean dryRun)
            throws IOException {
        FileSystem fs = root.getFileSystem(conf);
        return clean(fs, fs.makeQualified(root), policy, dryRun, System.currentTimeMillis());
    }

    static Report clean(FileSystem fs, Path root, DatasetCommit.Policy policy, boolean dryRun, long now)
            throws IOException {
        Manifest current = Manifest.readFile(fs, new Path(root, DatasetLayout.MANIFEST));
        if (current == null) {
            throw new IOException(root + ": no " + DatasetLayout.MANIFEST + "; without a committed version nothing is"
                    + " known to be safe to delete");
        }
        long v = current.version();
        long oldestRetained = v - policy.retainVersions();
        long orphanBefore = now - policy.orphanAge().toMillis();

        Set<String> keep = new HashSet<>(current.files());
        Set<String> superseded = new HashSet<>();
        boolean indexRetained = current.hasIndex();
        TreeMap<Long, FileStatus> history = new TreeMap<>();
        Path historyDir = new Path(root, DatasetLayout.HISTORY);
        for (FileStatus st : list(fs, historyDir)) {
            DatasetLayout.historyVersion(st.getPath().getName()).ifPresent(h -> history.put(h, st));
        }
        for (var e : history.headMap(v, false).entrySet()) {
            Manifest old;
            try {
                old = Manifest.readFile(fs, e.getValue().getPath());
            } catch (IOException unreadable) {
                continue; // its files fall under the orphan rule
            }
            if (old == null) {
                continue;
            }
            if (e.getKey() >= oldestRetained) {
                keep.addAll(old.files());
                indexRetained |= old.hasIndex();
            } else {
                superseded.addAll(old.files());
            }
        }
        superseded.removeAll(keep);

        List<Deletion> out = new ArrayList<>();
        for (FileStatus st : list(fs, root)) {
            String name = st.getPath().getName();
            if (st.isDirectory()) {
                if (name.equals(DatasetLayout.STAGING)) {
                    for (FileStatus job : list(fs, st.getPath())) {
                        long[] newestAndBytes = newestAndBytes(fs, job);
                        if (newestAndBytes[0] < orphanBefore) {
                            delete(fs, job.getPath(), true, Reason.STAGING, newestAndBytes[1], dryRun, out);
                        }
                    }
                    if (!dryRun && list(fs, st.getPath()).isEmpty()) {
                        fs.delete(st.getPath(), false);
                    }
                } else if (name.equals(DatasetLayout.INDEX)) {
                    long[] newestAndBytes = newestAndBytes(fs, st);
                    if (!indexRetained && newestAndBytes[0] < orphanBefore) {
                        delete(fs, st.getPath(), true, Reason.STALE_INDEX, newestAndBytes[1], dryRun, out);
                    } else {
                        for (FileStatus c : list(fs, st.getPath())) {
                            if (DatasetLayout.isTempName(c.getPath().getName()) && c.getModificationTime() < orphanBefore) {
                                delete(fs, c.getPath(), false, Reason.TEMPORARY, c.getLen(), dryRun, out);
                            }
                        }
                    }
                }
                continue;
            }
            if (keep.contains(name) || name.equals(DatasetLayout.MANIFEST)) {
                continue;
            }
            boolean old = st.getModificationTime() < orphanBefore;
            if (superseded.contains(name) && !name.equals(DatasetLayout.INDEX)) {
                delete(fs, st.getPath(), false, Reason.SUPERSEDED, st.getLen(), dryRun, out);
            } else if (name.equals(DatasetLayout.INDEX)) {
                if (!indexRetained && old) {
                    delete(fs, st.getPath(), false, Reason.STALE_INDEX, st.getLen(), dryRun, out);
                }
            } else if (DatasetLayout.isShardName(name)) {
                if (old) {
                    delete(fs, st.getPath(), false, Reason.ORPHAN_SHARD, st.getLen(), dryRun, out);
                }
            } else if (DatasetLayout.isTempName(name) && old) {
                delete(fs, st.getPath(), false, Reason.TEMPORARY, st.getLen(), dryRun, out);
            }
        }
        for (var e : history.entrySet()) {
            FileStatus st = e.getValue();
            if (e.getKey() < oldestRetained) {
                delete(fs, st.getPath(), false, Reason.HISTORY, st.getLen(), dryRun, out);
            } else if (e.getKey() > v && st.getModificationTime() < orphanBefore) {
                delete(fs, st.getPath(), false, Reason.UNCOMMITTED_HISTORY, st.getLen(), dryRun, out);
            }
        }
        for (FileStatus st : list(fs, historyDir)) {
            String name = st.getPath().getName();
            if (DatasetLayout.isTempName(name) && st.getModificationTime() < orphanBefore) {
                delete(fs, st.getPath(), false, Reason.TEMPORARY, st.getLen(), dryRun, out);
            }
        }
        return new Report(root.toString(), v, dryRun, List.copyOf(out));
    }

    private static void delete(FileSystem fs, Path p, boolean recursive, Reason reason, long bytes, boolean dryRun,
                               List<Deletion> out) throws IOException {
        if (!dryRun) {
            fs.delete(p, recursive);
            CrashPoints.reached(CrashPoints.CLEANUP_DELETED);
        }
        out.add(new Deletion(p.toString(), reason, bytes));
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
