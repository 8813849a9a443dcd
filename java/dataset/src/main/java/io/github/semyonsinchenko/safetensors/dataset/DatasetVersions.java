package io.github.semyonsinchenko.safetensors.dataset;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.OptionalLong;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Which version of a dataset is current (format/dataset.md, "Commit protocol"). A commit creates
 * {@code _manifests/<v>.json} atomically and only if absent; that is the commit point. It then copies
 * the entry to {@code dataset_manifest.json}, which can lag behind (a crash, or two commits finishing
 * out of order). So the current version is the pointer's version followed forward through the
 * history: the highest {@code v} such that every entry from the pointer's version up to {@code v}
 * exists. Without a pointer, the newest history entry is current (a first commit that crashed before
 * writing it).
 */
public final class DatasetVersions {
    private DatasetVersions() {}

    /**
     * A committed version as a reader resolved it.
     *
     * @param manifest the version's manifest
     * @param file the file it was read from (the pointer or a history entry)
     */
    public record Snapshot(Manifest manifest, Path file) {
        /** {@return the version number} */
        public long version() {
            return manifest.version();
        }
    }

    /** How far a reader follows the history past the pointer before it gives up (a runaway chain). */
    static final int MAX_FORWARD = 100_000;

    /**
     * The current version of the dataset at {@code root}, or null when none was committed.
     *
     * @param fs the file system
     * @param root the dataset root (qualified or not)
     * @return the newest committed version, or null
     * @throws IOException when a manifest exists but cannot be read or breaks a rule
     */
    public static Snapshot latest(FileSystem fs, Path root) throws IOException {
        Path pointer = new Path(root, DatasetLayout.MANIFEST);
        Manifest m = Manifest.readFile(fs, pointer);
        Snapshot current;
        if (m != null) {
            current = new Snapshot(m, pointer);
        } else {
            OptionalLong newest = newestHistory(fs, root);
            if (newest.isEmpty()) {
                return null;
            }
            Path entry = history(root, newest.getAsLong());
            Manifest h = Manifest.readFile(fs, entry);
            if (h == null) {
                return null; // deleted between the listing and the read: nothing committed to follow
            }
            current = new Snapshot(h, entry);
        }
        return forward(fs, root, current);
    }

    /** Follows the history from {@code from} while the next version exists. */
    static Snapshot forward(FileSystem fs, Path root, Snapshot from) throws IOException {
        Snapshot current = from;
        for (int i = 0; i < MAX_FORWARD; i++) {
            Path next = history(root, current.version() + 1);
            Manifest n = Manifest.readFile(fs, next);
            if (n == null) {
                return current;
            }
            if (n.version() != current.version() + 1) {
                throw new DatasetException(DatasetRule.MANIFEST_INVALID, next.toString(), "the entry of version "
                        + (current.version() + 1) + " says version " + n.version());
            }
            current = new Snapshot(n, next);
        }
        throw new DatasetException(DatasetRule.MANIFEST_INVALID, root.toString(), "more than " + MAX_FORWARD
                + " history entries past " + DatasetLayout.MANIFEST);
    }

    /**
     * The history entry of that version.
     *
     * @param root the dataset root
     * @param v a version
     * @return the history entry of that version
     */
    public static Path history(Path root, long v) {
        return new Path(new Path(root, DatasetLayout.HISTORY), DatasetLayout.historyName(v));
    }

    /** The newest version in {@code _manifests/}, if any. */
    static OptionalLong newestHistory(FileSystem fs, Path root) throws IOException {
        long newest = -1;
        try {
            for (FileStatus st : fs.listStatus(new Path(root, DatasetLayout.HISTORY))) {
                OptionalLong v = DatasetLayout.historyVersion(st.getPath().getName());
                if (v.isPresent()) {
                    newest = Math.max(newest, v.getAsLong());
                }
            }
        } catch (FileNotFoundException e) {
            if (Probe.absent(fs, new Path(root, DatasetLayout.HISTORY))) {
                return OptionalLong.empty();
            }
            throw new DatasetException(DatasetRule.MANIFEST_UNREADABLE, new Path(root, DatasetLayout.HISTORY)
                    .toString(), "cannot list it: " + e.getMessage(), e);
        }
        return newest < 0 ? OptionalLong.empty() : OptionalLong.of(newest);
    }

    /**
     * Whether the path holds a committed dataset (a pointer or a history entry).
     *
     * @param fs the file system
     * @param root the dataset root
     * @return true when some version was committed
     * @throws IOException when the pointer exists but cannot be read
     */
    public static boolean exists(FileSystem fs, Path root) throws IOException {
        Path pointer = new Path(root, DatasetLayout.MANIFEST);
        if (!Probe.absent(fs, pointer)) {
            return true;
        }
        return newestHistory(fs, root).isPresent();
    }
}
