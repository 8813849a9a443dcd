package io.github.semyonsinchenko.safetensors.dataset;

import java.util.Locale;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The names of everything in a dataset directory (format/dataset.md), and the one rule for a path a
 * manifest names ({@link #relativePath}). Every name is formatted with {@link Locale#ROOT}: under a
 * locale with other digits ({@code ar-EG}) {@code %05d} would not give ASCII digits.
 */
public final class DatasetLayout {
    private DatasetLayout() {}

    /** The commit point: a dataset is what this file names. */
    public static final String MANIFEST = "dataset_manifest.json";
    /**
     * The tensor index: a directory holding one Parquet file, {@link #INDEX_FILE}, as Spark writes
     * Parquet, so {@code spark.read.parquet(root + "/_tensor_index.parquet")} reads it (Spark ignores
     * a single file whose name starts with {@code _}, but reads the part files of such a directory).
     * Datasets of earlier versions have a single file under this name.
     */
    public static final String INDEX = "_tensor_index.parquet";
    /** The index's one Parquet file, relative to the root (what the manifest names). */
    public static final String INDEX_FILE = INDEX + "/part-00000.parquet";
    /** Task output before the job commit: {@code _staging/<job>/attempt-<partition>-<task>/}. */
    public static final String STAGING = "_staging";
    /**
     * Every committed version: {@code _manifests/<version, 20 digits>.json}. Creating the next entry,
     * atomically and only if absent, is the commit ({@link DatasetCommit}); {@link #MANIFEST} is a
     * copy of the newest entry.
     */
    public static final String HISTORY = "_manifests";
    /**
     * Each version's own tensor index, immutable once written: {@code _index/<version, 20 digits>-<uuid>.parquet}
     * (what the manifest's {@code index.file} names). {@link #INDEX_FILE} is a copy of the newest for
     * tools that read the index by its directory name.
     */
    public static final String INDEX_VERSIONS = "_index";
    /** The extension of shards (and of plain files read as a dataset). */
    public static final String EXTENSION = ".safetensors";

    private static final Pattern SHARD_NAME = Pattern.compile("part-[0-9]{5,}-.*\\.safetensors");
    private static final Pattern HISTORY_NAME = Pattern.compile("([0-9]{20})\\.json");
    private static final Pattern TEMP_NAME = Pattern.compile("\\..+\\.[0-9a-f-]{36}\\.tmp");
    private static final Pattern INDEX_VERSION_NAME = Pattern.compile("([0-9]{20})-[0-9a-f-]{36}\\.parquet");
    /** A colon before the first slash: a URI scheme (or a drive letter) to Hadoop, never a relative name. */
    private static final Pattern SCHEME = Pattern.compile("[^/]*:.*");

    /**
     * The dataset root: the index directory's parent, or the file's directory (earlier versions).
     *
     * @param indexFile an index file at {@link #INDEX_FILE} (or the single file {@link #INDEX} of earlier versions)
     * @return the dataset root: the index directory's parent, or the file's directory (earlier versions)
     */
    public static org.apache.hadoop.fs.Path rootOfIndex(org.apache.hadoop.fs.Path indexFile) {
        org.apache.hadoop.fs.Path dir = indexFile.getParent();
        return dir.getName().equals(INDEX) ? dir.getParent() : dir;
    }

    /**
     * A shard: {@code part-<task:05d>-<shard:04d>-<uuid>.safetensors}, the original connector's
     * pattern: {@code task} is the Spark partition, {@code shard} counts the files of one task
     * writer, {@code uuid} is drawn once per task writer.
     *
     * @param partitionId the Spark partition (or writer) number
     * @param shardIndex which file of the task writer
     * @param uuid drawn once per task writer
     * @return the shard's file name
     */
    public static String shardName(int partitionId, int shardIndex, UUID uuid) {
        return String.format(Locale.ROOT, "part-%05d-%04d-%s%s", partitionId, shardIndex, uuid, EXTENSION);
    }

    /**
     * A name a writer gives shards: this connector's and the original's
     * ({@code part-<task>-<shard>-<uuid>}), and this connector's earlier {@code part-<task>-<uuid>}.
     *
     * @param name a file name (no directory)
     * @return whether it is a shard name a writer of this format makes
     */
    public static boolean isShardName(String name) {
        return SHARD_NAME.matcher(name).matches();
    }

    /**
     * The staging directory of one task attempt under the job's staging directory.
     *
     * @param partitionId the Spark partition
     * @param taskId the task attempt
     * @return the staging directory of one task attempt under the job's staging directory
     */
    public static String attemptDirName(int partitionId, long taskId) {
        return String.format(Locale.ROOT, "attempt-%05d-%d", partitionId, taskId);
    }

    /**
     * The index's path relative to the root, under {@link #INDEX_VERSIONS}.
     *
     * @param version the version the index is written for
     * @param attempt drawn per commit attempt, so two attempts never share a name
     * @return the index's path relative to the root, under {@link #INDEX_VERSIONS}
     */
    public static String indexVersionFile(long version, UUID attempt) {
        return INDEX_VERSIONS + "/" + String.format(Locale.ROOT, "%020d-%s.parquet", version, attempt);
    }

    /**
     * The version it was written for, if the name is one.
     *
     * @param name a file name under {@link #INDEX_VERSIONS}
     * @return the version it was written for, if the name is one
     */
    public static OptionalLong indexVersion(String name) {
        Matcher m = INDEX_VERSION_NAME.matcher(name);
        return m.matches() ? OptionalLong.of(Long.parseLong(m.group(1))) : OptionalLong.empty();
    }

    /**
     * A path a manifest names (a shard, the index), normalised: relative to the dataset root, segments
     * joined by {@code /}, without empty or {@code .} segments ({@code ./part-1} is {@code part-1}).
     * Everything is compared in this form (reads, vacuum, cleanup, commit).
     *
     * @param path the path as written
     * @param source the manifest, for the message
     * @return the normalised relative path
     * @throws DatasetException ({@link DatasetRule#PATH_OUTSIDE_ROOT}) for an empty or absolute path, one
     *     with a scheme ({@code file:}, {@code s3a:}), a backslash, or a {@code ..} segment
     */
    public static String relativePath(String path, String source) throws DatasetException {
        String why = null;
        if (path == null || path.isEmpty()) {
            why = "an empty path";
        } else if (path.startsWith("/")) {
            why = "an absolute path";
        } else if (SCHEME.matcher(path).matches()) {
            why = "a path with a scheme";
        } else if (path.indexOf('\\') >= 0) {
            why = "a path with a backslash";
        }
        StringBuilder out = new StringBuilder();
        if (why == null) {
            for (String segment : path.split("/", -1)) {
                if (segment.equals("..")) {
                    why = "a path with a '..' segment";
                    break;
                }
                if (!segment.isEmpty() && !segment.equals(".")) {
                    out.append(out.isEmpty() ? "" : "/").append(segment);
                }
            }
            if (why == null && out.isEmpty()) {
                why = "a path naming the root itself";
            }
        }
        if (why != null) {
            throw new DatasetException(DatasetRule.PATH_OUTSIDE_ROOT, source, why + ": \"" + path + "\"");
        }
        return out.toString();
    }

    /**
     * The name of its entry under {@link #HISTORY}.
     *
     * @param version a version
     * @return the name of its entry under {@link #HISTORY}
     */
    public static String historyName(long version) {
        return String.format(Locale.ROOT, "%020d.json", version);
    }

    /**
     * The version the entry holds, if the name is one.
     *
     * @param name a file name under {@link #HISTORY}
     * @return the version the entry holds, if the name is one
     */
    public static OptionalLong historyVersion(String name) {
        Matcher m = HISTORY_NAME.matcher(name);
        return m.matches() ? OptionalLong.of(Long.parseLong(m.group(1))) : OptionalLong.empty();
    }

    /**
     * A temporary name next to it, invisible to readers (leading dot), unique per writer.
     *
     * @param name the file the temporary one becomes
     * @return a temporary name next to it, invisible to readers (leading dot), unique per writer
     */
    public static String tempName(String name) {
        return "." + name + "." + UUID.randomUUID() + ".tmp";
    }

    /**
     * Whether it is a temporary name of {@link #tempName}.
     *
     * @param name a file name
     * @return whether it is a temporary name of {@link #tempName}
     */
    public static boolean isTempName(String name) {
        return TEMP_NAME.matcher(name).matches();
    }

    /**
     * Whether readers of loose files skip it ({@code _} or {@code .} first).
     *
     * @param name a file name
     * @return whether readers of loose files skip it ({@code _} or {@code .} first)
     */
    public static boolean isHidden(String name) {
        return name.startsWith("_") || name.startsWith(".");
    }
}
