package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.options.OptionException;
import io.github.semyonsinchenko.safetensors.options.Options;
import io.github.semyonsinchenko.safetensors.spark.conf.SparkOptions;
import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SequencedMap;
import java.util.Set;
import org.apache.spark.sql.internal.SQLConf;

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

    /** {@code layout}: {@code auto} (default), {@code wide}, or {@code kv} (also {@code key_value}). */
    public static final String LAYOUT = "layout";
    /** {@code inferSchema}: infer the schema when none is given (default false). */
    public static final String INFER_SCHEMA = "inferSchema";
    /** {@code unbatch}: one row per sample of a batch dataset (default false). */
    public static final String UNBATCH = "unbatch";
    /** {@code ignoreCorruptFiles}: skip files with an invalid header (default: the session's setting). */
    public static final String IGNORE_CORRUPT_FILES = "ignoreCorruptFiles";
    /**
     * {@code ignoreMissingFiles}: skip files that vanished after the listing (default: the session's
     * setting).
     */
    public static final String IGNORE_MISSING_FILES = "ignoreMissingFiles";
    /**
     * {@code useIndex}: pick files through the tensor index for {@code tensor_key} filters (default
     * true).
     */
    public static final String USE_INDEX = "useIndex";
    /** {@code mmap}: memory-map local files (default true). */
    public static final String MMAP = "mmap";
    /**
     * {@code looseFiles}: read the files of a directory that was a dataset but has no manifest
     * (default false).
     */
    public static final String LOOSE_FILES = "looseFiles";
    /**
     * {@code coalesce_gap_bytes}: remote reads span gaps up to this many bytes (default
     * {@value #DEFAULT_COALESCE_GAP_BYTES}).
     */
    public static final String COALESCE_GAP_BYTES = "coalesce_gap_bytes";
    /**
     * {@code max_read_bytes}: the largest read fetching more than one tensor, in bytes (default
     * {@value #DEFAULT_MAX_READ_BYTES}; 0: one request per tensor).
     */
    public static final String MAX_READ_BYTES = "max_read_bytes";
    /** A gap of up to 1 MiB costs less to read than one more request to an object store. */
    public static final long DEFAULT_COALESCE_GAP_BYTES = 1L << 20;
    /** 16 MiB per read: few requests, and little memory held per task while its rows are emitted. */
    public static final long DEFAULT_MAX_READ_BYTES = 16L << 20;

    /** How tensors map to rows. */
    public enum Layout {
        /** What the manifest says: kv for datasets written with {@code name_col}, else wide. */
        AUTO,
        /**
         * One column per tensor name (plain files, one row per file) or per serialized column (batch
         * datasets, one row per batch).
         */
        WIDE,
        /**
         * One row per written row: {@code tensor_key} plus a nullable column per serialized column (a
         * plain file read as kv: one row per tensor, column {@code tensor}).
         */
        KV
    }

    /** Every option the read reads ({@code path} and {@code paths} are Spark's). */
    public static final Set<String> KNOWN = Set.of("path", "paths", LAYOUT, INFER_SCHEMA, UNBATCH,
            IGNORE_CORRUPT_FILES, IGNORE_MISSING_FILES, USE_INDEX, MMAP, LOOSE_FILES, COALESCE_GAP_BYTES, MAX_READ_BYTES);

    /** Spellings of {@link #LAYOUT}. */
    private static final SequencedMap<String, Layout> LAYOUTS = new LinkedHashMap<>();

    static {
        LAYOUTS.put("auto", Layout.AUTO);
        LAYOUTS.put("wide", Layout.WIDE);
        LAYOUTS.put("kv", Layout.KV);
        LAYOUTS.put("key_value", Layout.KV);
        LAYOUTS.put("keyvalue", Layout.KV);
    }

    /**
     * Parses and checks the read options on the driver, before any task runs. An unknown option or a
     * bad value is Spark's {@code AnalysisException} (undeclared, as Spark's interfaces do not declare
     * it), naming the option and what is allowed.
     *
     * @param raw the options of the read
     * @return the options
     */
    public static ReadOptions parse(Map<String, String> raw) {
        try {
            Options o = SparkOptions.of("safetensors read", raw, KNOWN);
            SQLConf sql = SQLConf.get();
            return new ReadOptions(o.choice(LAYOUT, Layout.AUTO, LAYOUTS), o.bool(INFER_SCHEMA, false),
                    o.bool(UNBATCH, false), o.bool(IGNORE_CORRUPT_FILES, sql.ignoreCorruptFiles()),
                    o.bool(IGNORE_MISSING_FILES, sql.ignoreMissingFiles()), o.bool(USE_INDEX, true),
                    o.bool(MMAP, true), o.bool(LOOSE_FILES, false),
                    o.longValue(COALESCE_GAP_BYTES, DEFAULT_COALESCE_GAP_BYTES, 0, TensorSource.MAX_VALUE_BYTES, "bytes"),
                    o.longValue(MAX_READ_BYTES, DEFAULT_MAX_READ_BYTES, 0, TensorSource.MAX_VALUE_BYTES, "bytes"));
        } catch (OptionException e) {
            throw Errors.analysis(e.getMessage(), e);
        }
    }
}
