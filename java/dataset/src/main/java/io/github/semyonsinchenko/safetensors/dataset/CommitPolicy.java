package io.github.semyonsinchenko.safetensors.dataset;

import io.github.semyonsinchenko.safetensors.options.Options;
import java.io.Serial;
import java.io.Serializable;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * What a commit keeps and how hard it syncs.
 *
 * @param retainVersions committed versions before the current one whose files are kept (readers
 *     that resolved them may still be reading); files of older versions are deleted by the
 *     cleanup of the next commit
 * @param orphanAge files no committed manifest names (staging of crashed or running jobs,
 *     shards of crashed commits, temporary files) are deleted once unmodified this long
 * @param fsync force shards, index and manifest to stable storage before the commit
 * @param manifestWrite how {@code dataset_manifest.json} is replaced
 * @param maxAttempts how often an append tries to claim a version: it rebases on every version
 *     other appends committed meanwhile, up to this many attempts in all
 */
public record CommitPolicy(int retainVersions, Duration orphanAge, boolean fsync, ManifestWrite manifestWrite,
                           int maxAttempts) implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;

    /** How {@code dataset_manifest.json} replaces the old one. */
    public enum ManifestWrite {
        /** {@link #PUT} on object stores (s3a, gs, abfs, wasb, oss, cos, obs), else {@link #RENAME}. */
        AUTO,
        /** Temporary file + rename over the manifest (atomic on local file systems and HDFS). */
        RENAME,
        /** One overwriting create: an atomic single-object put on object stores. */
        PUT
    }

    /** Option: {@link #retainVersions}. */
    public static final String RETAIN_VERSIONS = "retain_versions";
    /** Option: {@link #orphanAge}. */
    public static final String ORPHAN_AGE = "orphan_age";
    /** Option: {@link #fsync}. */
    public static final String FSYNC = "fsync";
    /** Option: {@link #manifestWrite}. */
    public static final String MANIFEST_WRITE = "manifest_write";
    /** Option: {@link #maxAttempts}. */
    public static final String COMMIT_ATTEMPTS = "commit_attempts";
    /** Every option name of the policy (write options of the Spark connector, flags of the CLI). */
    public static final Set<String> OPTIONS = Set.of(RETAIN_VERSIONS, ORPHAN_AGE, FSYNC, MANIFEST_WRITE,
            COMMIT_ATTEMPTS);

    /** One retained version, orphans after a day, no fsync, automatic manifest write, 10 attempts. */
    public static final CommitPolicy DEFAULT = new CommitPolicy(1, Duration.ofDays(1), false, ManifestWrite.AUTO, 10);

    /** Checks the values: no negative retention or age, at least one attempt. */
    public CommitPolicy {
        if (retainVersions < 0) {
            throw new IllegalArgumentException("'" + RETAIN_VERSIONS + "' must be >= 0, not " + retainVersions);
        }
        if (orphanAge.isNegative()) {
            throw new IllegalArgumentException("'" + ORPHAN_AGE + "' must not be negative, not " + orphanAge);
        }
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("'" + COMMIT_ATTEMPTS + "' must be >= 1, not " + maxAttempts);
        }
    }

    /**
     * Reads the policy options among {@code options} (those of a write, or the CLI's vacuum flags);
     * absent ones keep their defaults.
     *
     * @param options the options, read strictly
     * @return the policy
     * @throws io.github.semyonsinchenko.safetensors.options.OptionException naming the option and what
     *     is allowed
     */
    public static CommitPolicy parse(Options options) {
        return new CommitPolicy(
                options.intValue(RETAIN_VERSIONS, DEFAULT.retainVersions, 0, Integer.MAX_VALUE, "versions"),
                options.duration(ORPHAN_AGE, DEFAULT.orphanAge),
                options.bool(FSYNC, DEFAULT.fsync),
                options.choice(MANIFEST_WRITE, DEFAULT.manifestWrite, Options.lowerCaseNames(ManifestWrite.class)),
                options.intValue(COMMIT_ATTEMPTS, DEFAULT.maxAttempts, 1, Integer.MAX_VALUE, "attempts"));
    }

    /**
     * {@link #parse(Options)} of a plain map (names case-insensitive).
     *
     * @param options option name to value
     * @return the policy
     * @throws io.github.semyonsinchenko.safetensors.options.OptionException naming the option and what
     *     is allowed
     */
    public static CommitPolicy parse(Map<String, String> options) {
        return parse(Options.of("commit policy", options));
    }
}
