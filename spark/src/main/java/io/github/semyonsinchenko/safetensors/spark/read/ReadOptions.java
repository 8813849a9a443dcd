package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.dataset.OptionNames;
import java.io.Serializable;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The read options of {@code format("safetensors")}, parsed once on the driver.
 *
 * @param layout {@code auto} (from the manifest), {@code wide} or {@code kv}
 * @param inferSchema infer the schema when none is given (otherwise it is an error)
 * @param unbatch one row per sample: split every tensor of a row along its leading dimension
 * @param ignoreCorruptFiles skip files whose header is invalid instead of failing (Spark's option,
 *     defaulting to {@code spark.sql.files.ignoreCorruptFiles}); a missing file is not corrupt
 * @param ignoreMissingFiles skip files that vanished after the listing (Spark's option, defaulting
 *     to {@code spark.sql.files.ignoreMissingFiles})
 * @param useIndex use {@code _tensor_index.parquet} to pick files for {@code tensor_key} filters
 * @param mmap memory-map local files (off: read them through the Hadoop FileSystem like remote files)
 * @param looseFiles read the {@code *.safetensors} files of a directory that is, or was, a dataset
 *     (history, staging directory or shard names) but has no manifest, instead of failing
 * @param coalesceGapBytes remote reads: the largest run of unselected bytes one read spans to fetch
 *     two selected tensors (or samples) of a file together
 * @param maxReadBytes remote reads: the largest read that fetches more than one tensor; 0 reads
 *     every tensor with a request of its own
 */
public record ReadOptions(Layout layout, boolean inferSchema, boolean unbatch, boolean ignoreCorruptFiles,
                          boolean ignoreMissingFiles, boolean useIndex, boolean mmap, boolean looseFiles,
                          long coalesceGapBytes, long maxReadBytes)
        implements Serializable {

    public static final String LAYOUT = "layout";
    public static final String INFER_SCHEMA = "inferSchema";
    public static final String UNBATCH = "unbatch";
    public static final String IGNORE_CORRUPT_FILES = "ignoreCorruptFiles";
    public static final String IGNORE_MISSING_FILES = "ignoreMissingFiles";
    public static final String USE_INDEX = "useIndex";
    public static final String MMAP = "mmap";
    public static final String LOOSE_FILES = "looseFiles";
    public static final String COALESCE_GAP_BYTES = "coalesce_gap_bytes";
    public static final String MAX_READ_BYTES = "max_read_bytes";
    /** A gap of up to 1 MiB costs less to read than one more request to an object store. */
    public static final long DEFAULT_COALESCE_GAP_BYTES = 1L << 20;
    /** 16 MiB per read: few requests, and little memory held per task while its rows are emitted. */
    public static final long DEFAULT_MAX_READ_BYTES = 16L << 20;

    /** How tensors map to rows. */
    public enum Layout { AUTO, WIDE, KV }

    /** Every option the read reads ({@code path} and {@code paths} are Spark's). */
    public static final Set<String> KNOWN = Set.of("path", "paths", LAYOUT, INFER_SCHEMA, UNBATCH,
            IGNORE_CORRUPT_FILES, IGNORE_MISSING_FILES, USE_INDEX, MMAP, LOOSE_FILES, COALESCE_GAP_BYTES, MAX_READ_BYTES);

    public static ReadOptions parse(Map<String, String> raw) {
        CaseInsensitiveStringMap o = raw instanceof CaseInsensitiveStringMap c ? c : new CaseInsensitiveStringMap(raw);
        OptionNames.check(o.keySet(), KNOWN, "safetensors read");
        String layout = o.getOrDefault(LAYOUT, "auto").trim().toUpperCase(Locale.ROOT);
        Layout l = switch (layout) {
            case "AUTO" -> Layout.AUTO;
            case "WIDE" -> Layout.WIDE;
            case "KV", "KEY_VALUE", "KEYVALUE" -> Layout.KV;
            default -> throw new IllegalArgumentException("option layout must be auto, wide or kv, not \""
                    + o.get(LAYOUT) + "\"");
        };
        SQLConf sql = SQLConf.get();
        return new ReadOptions(l, bool(o, INFER_SCHEMA, false), bool(o, UNBATCH, false),
                bool(o, IGNORE_CORRUPT_FILES, sql.ignoreCorruptFiles()),
                bool(o, IGNORE_MISSING_FILES, sql.ignoreMissingFiles()), bool(o, USE_INDEX, true), bool(o, MMAP, true),
                bool(o, LOOSE_FILES, false), bytes(o, COALESCE_GAP_BYTES, DEFAULT_COALESCE_GAP_BYTES),
                bytes(o, MAX_READ_BYTES, DEFAULT_MAX_READ_BYTES));
    }

    /** A byte count in [0, the largest Spark binary value]. */
    private static long bytes(CaseInsensitiveStringMap o, String key, long dflt) {
        String v = o.get(key);
        if (v == null) {
            return dflt;
        }
        long n;
        try {
            n = Long.parseLong(v.trim().replace("_", ""));
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 0 || n > TensorSource.MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("option " + key + " must be a whole number of bytes in [0, "
                    + TensorSource.MAX_VALUE_BYTES + "], not \"" + v + "\"");
        }
        return n;
    }

    private static boolean bool(CaseInsensitiveStringMap o, String key, boolean dflt) {
        String v = o.get(key);
        if (v == null) {
            return dflt;
        }
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("option " + key + " must be true or false, not \"" + v + "\"");
        };
    }
}
