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
    /** Driver: the new index is in place. */
    public static final String INDEX_WRITTEN = "commit.indexWritten";
    /** Driver: the history copy and the temporary manifest are written, the manifest is not replaced. */
    public static final String BEFORE_MANIFEST = "commit.beforeManifest";
    /** Driver: the manifest is replaced (committed); nothing is cleaned up yet. */
    public static final String AFTER_MANIFEST = "commit.afterManifest";
    /** Driver: this job's staging directory is removed. */
    public static final String STAGING_REMOVED = "cleanup.stagingRemoved";
    /** Driver: the retention cleanup deleted a file (n = which deletion). */
    public static final String CLEANUP_DELETED = "cleanup.deleted";

    private static final ConcurrentHashMap<String, AtomicInteger> REACHED = new ConcurrentHashMap<>();

    private CrashPoints() {}

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
