package io.github.semyonsinchenko.safetensors.spark.read;

import java.io.Serializable;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The read options of {@code format("safetensors")}, parsed once on the driver.
 *
 * @param layout {@code auto} (from the manifest), {@code wide} or {@code kv}
 * @param inferSchema infer the schema when none is given (otherwise it is an error)
 * @param unbatch one row per sample: split every tensor of a row along its leading dimension
 * @param ignoreCorruptFiles skip files whose header is invalid instead of failing (Spark's option,
 *     defaulting to {@code spark.sql.files.ignoreCorruptFiles})
 * @param useIndex use {@code _tensor_index.parquet} to pick files for {@code tensor_key} filters
 * @param mmap memory-map local files (off: read them through the Hadoop FileSystem like remote files)
 */
public record ReadOptions(Layout layout, boolean inferSchema, boolean unbatch, boolean ignoreCorruptFiles,
                          boolean useIndex, boolean mmap) implements Serializable {

    public static final String LAYOUT = "layout";
    public static final String INFER_SCHEMA = "inferSchema";
    public static final String UNBATCH = "unbatch";
    public static final String IGNORE_CORRUPT_FILES = "ignoreCorruptFiles";
    public static final String USE_INDEX = "useIndex";
    public static final String MMAP = "mmap";

    /** How tensors map to rows. */
    public enum Layout { AUTO, WIDE, KV }

    public static ReadOptions parse(Map<String, String> raw) {
        CaseInsensitiveStringMap o = raw instanceof CaseInsensitiveStringMap c ? c : new CaseInsensitiveStringMap(raw);
        String layout = o.getOrDefault(LAYOUT, "auto").trim().toUpperCase(Locale.ROOT);
        Layout l = switch (layout) {
            case "AUTO" -> Layout.AUTO;
            case "WIDE" -> Layout.WIDE;
            case "KV", "KEY_VALUE", "KEYVALUE" -> Layout.KV;
            default -> throw new IllegalArgumentException("option layout must be auto, wide or kv, not \""
                    + o.get(LAYOUT) + "\"");
        };
        boolean ignoreCorruptDefault = SQLConf.get().ignoreCorruptFiles();
        return new ReadOptions(l, bool(o, INFER_SCHEMA, false), bool(o, UNBATCH, false),
                bool(o, IGNORE_CORRUPT_FILES, ignoreCorruptDefault), bool(o, USE_INDEX, true), bool(o, MMAP, true));
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
