package io.github.semyonsinchenko.safetensors.dataset;

import java.io.Serial;
import java.io.Serializable;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

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
     * Reads the policy options (names case-insensitive); absent ones keep their defaults.
     *
     * @param options option name to value
     * @return the policy
     * @throws IllegalArgumentException naming the option and what is allowed
     */
    public static CommitPolicy parse(Map<String, String> options) {
        Map<String, String> o = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        options.forEach((k, v) -> {
            if (v != null) {
                o.put(k, v);
            }
        });
        int retain = integer(o, RETAIN_VERSIONS, DEFAULT.retainVersions, ">= 0");
        int attempts = integer(o, COMMIT_ATTEMPTS, DEFAULT.maxAttempts, ">= 1");
        Duration age = o.containsKey(ORPHAN_AGE) ? parseDuration(ORPHAN_AGE, o.get(ORPHAN_AGE)) : DEFAULT.orphanAge;
        boolean fsync = DEFAULT.fsync;
        if (o.containsKey(FSYNC)) {
            fsync = switch (o.get(FSYNC).trim().toLowerCase(Locale.ROOT)) {
                case "true" -> true;
                case "false" -> false;
                default -> throw new IllegalArgumentException("'" + FSYNC + "' must be true or false, not \""
                        + o.get(FSYNC) + "\"");
            };
        }
        ManifestWrite write = DEFAULT.manifestWrite;
        if (o.containsKey(MANIFEST_WRITE)) {
            write = switch (o.get(MANIFEST_WRITE).trim().toLowerCase(Locale.ROOT)) {
                case "auto" -> ManifestWrite.AUTO;
                case "rename" -> ManifestWrite.RENAME;
                case "put" -> ManifestWrite.PUT;
                default -> throw new IllegalArgumentException("'" + MANIFEST_WRITE + "' must be auto, rename or "
                        + "put, not \"" + o.get(MANIFEST_WRITE) + "\"");
            };
        }
        return new CommitPolicy(retain, age, fsync, write, attempts);
    }

    private static int integer(Map<String, String> o, String option, int dflt, String range) {
        if (!o.containsKey(option)) {
            return dflt;
        }
        try {
            return Integer.parseInt(o.get(option).trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + option + "' must be an integer " + range + ", not \""
                    + o.get(option) + "\"");
        }
    }

    /**
     * {@code 90s}, {@code 30m}, {@code 12h}, {@code 7d}, {@code 250ms}, or a plain number of seconds.
     *
     * @param option the option's name, for the message
     * @param value the text
     * @return the duration
     * @throws IllegalArgumentException when it is none of these
     */
    public static Duration parseDuration(String option, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        try {
            if (v.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            }
            char unit = v.isEmpty() ? ' ' : v.charAt(v.length() - 1);
            String digits = Character.isDigit(unit) ? v : v.substring(0, v.length() - 1);
            long n = Long.parseLong(digits);
            return switch (unit) {
                case 's' -> Duration.ofSeconds(n);
                case 'm' -> Duration.ofMinutes(n);
                case 'h' -> Duration.ofHours(n);
                case 'd' -> Duration.ofDays(n);
                default -> {
                    if (!Character.isDigit(unit)) {
                        throw new NumberFormatException(value);
                    }
                    yield Duration.ofSeconds(n);
                }
            };
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + option + "' must be a duration such as 90s, 30m, 12h or 7d, "
                    + "not \"" + value + "\"");
        }
    }
}
