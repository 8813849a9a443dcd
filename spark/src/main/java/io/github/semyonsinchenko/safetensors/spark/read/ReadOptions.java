package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.spark.dataset.OptionNames;
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
 */
public record ReadOptions(Layout layout, boolean inferSchema, boolean unbatch, boolean ignoreCorruptFiles,
                          boolean ignoreMissingFiles, boolean useIndex, boolean mmap, boolean looseFiles)
        implements Serializable {

    public static final String LAYOUT = "layout";
    public static final String INFER_SCHEMA = "inferSchema";
    public static final String UNBATCH = "unbatch";
    public static final String IGNORE_CORRUPT_FILES = "ignoreCorruptFiles";
    public static final String IGNORE_MISSING_FILES = "ignoreMissingFiles";
    public static final String USE_INDEX = "useIndex";
    public static final String MMAP = "mmap";
    public static final String LOOSE_FILES = "looseFiles";

    /** How tensors map to rows. */
    public enum Layout { AUTO, WIDE, KV }

    /** Every option the read reads ({@code path} and {@code paths} are Spark's). */
    public static final Set<String> KNOWN = Set.of("path", "paths", LAYOUT, INFER_SCHEMA, UNBATCH,
            IGNORE_CORRUPT_FILES, IGNORE_MISSING_FILES, USE_INDEX, MMAP, LOOSE_FILES);

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
                bool(o, LOOSE_FILES, false));
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
