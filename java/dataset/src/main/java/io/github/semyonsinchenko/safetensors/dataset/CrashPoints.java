package io.github.semyonsinchenko.safetensors.dataset;

import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test hook for the crash-point tests: with the system property {@value #PROPERTY} set to
 * {@code <point>} or {@code <point>:<n>}, the JVM halts ({@link Runtime#halt}, no shutdown hooks,
 * no cleanup: what a SIGKILL or a lost machine leaves) the n-th time (default first) the write or
 * commit reaches that point. Unset (always, outside the tests) it does nothing.
 */
public final class CrashPoints {
    /** The system property naming the crash point. */
    public static final String PROPERTY = "safetensors.test.crashAt";
    /** The exit status of a halted JVM, so the test can tell the crash from another failure. */
    public static final int EXIT_STATUS = 86;

    /** Executor: a task has written some rows (its shard is not complete). */
    public static final String TASK_RUNNING = "task.running";
    /** Executor: a task has committed its shards to its staging directory. */
    public static final String TASK_STAGED = "task.staged";
    /** Driver: every task is staged, the job commit starts. */
    public static final String COMMIT_START = "commit.start";
    /** Driver: a shard was renamed from staging into the root (n = which rename). */
    public static final String SHARD_RENAMED = "commit.shardRenamed";
    /** Driver: the version's own index is written (no manifest names it yet). */
    public static final String INDEX_WRITTEN = "commit.indexWritten";
    /** Driver: everything the version names is in place; its history entry is not created yet. */
    public static final String BEFORE_CLAIM = "commit.beforeClaim";
    /** Driver: the history entry is created, the commit point; dataset_manifest.json still shows the old version. */
    public static final String CLAIMED = "commit.claimed";
    /** Driver: dataset_manifest.json shows the new version; nothing is cleaned up yet. */
    public static final String AFTER_MANIFEST = "commit.afterManifest";
    /** Driver: the copy of the index for other tools is replaced. */
    public static final String INDEX_COPIED = "commit.indexCopied";
    /** Driver: another commit took the version first; this one re-read the dataset and tries the next. */
    public static final String REBASED = "commit.rebased";
    /** Driver: this job's staging directory is removed. */
    public static final String STAGING_REMOVED = "cleanup.stagingRemoved";
    /** Driver: the retention cleanup deleted a file (n = which deletion). */
    public static final String CLEANUP_DELETED = "cleanup.deleted";

    private static final ConcurrentHashMap<String, AtomicInteger> REACHED = new ConcurrentHashMap<>();

    private CrashPoints() {}

    /**
     * Halts the JVM if the test hook names {@code point} and this is its n-th time; otherwise nothing.
     *
     * @param point one of the constants
     */
    public static void reached(String point) {
        String target = System.getProperty(PROPERTY);
        if (target == null || !target.startsWith(point)) {
            return;
        }
        int n = 1;
        String rest = target.substring(point.length());
        if (!rest.isEmpty()) {
            if (!rest.startsWith(":")) {
                return;
            }
            n = Integer.parseInt(rest.substring(1));
        }
        if (REACHED.computeIfAbsent(point, p -> new AtomicInteger()).incrementAndGet() == n) {
            System.err.println(String.format(Locale.ROOT, "[safetensors] crash point %s reached: halting", target));
            System.err.flush();
            Runtime.getRuntime().halt(EXIT_STATUS);
        }
    }
}
