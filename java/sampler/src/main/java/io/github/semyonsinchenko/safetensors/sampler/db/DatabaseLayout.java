package io.github.semyonsinchenko.safetensors.sampler.db;

import java.nio.file.Path;
import java.util.List;

/**
 * The on-disk layout of a headwater database directory: file names, widths and the exact size of
 * every binary file. Readers ({@link Database}) and writers (the synthetic generator, a Spark
 * preprocessor) both use these, so the format has one home. All numbers are little-endian;
 * bitmaps are LSB-first; every section of a table or task file starts at a multiple of 8.
 */
public final class DatabaseLayout {
    private DatabaseLayout() {}

    public static final String METADATA_FILE = "metadata.json";
    public static final String COLUMN_EMBEDDINGS_FILE = "column_embeddings.bin";
    public static final String CATEGORICAL_EMBEDDINGS_FILE = "categorical_embeddings.bin";
    public static final String TEXT_EMBEDDINGS_FILE = "text_embeddings.bin";
    public static final String GRAPH_FILE = "graph.bin";
    public static final String TABLES_DIR = "tables";
    public static final String TASKS_DIR = "tasks";
    public static final String BIN_SUFFIX = ".bin";

    /** Values per embedding row (f16 each). */
    public static final int EMBEDDING_DIM = 256;
    /** Bytes per embedding row. */
    public static final int EMBEDDING_ROW_BYTES = EMBEDDING_DIM * 2;
    /** Floats per timestamp cell. */
    public static final int TIMESTAMP_DIM = 15;
    /** The slot of a timestamp cell that holds the z-scored epoch time. */
    public static final int TIMESTAMP_ZSCORE_SLOT = 14;
    /** Observation time meaning "no temporal filter". */
    public static final long NO_OBSERVATION_TIME = Long.MAX_VALUE;

    /** Bytes of the graph header: N, E, N, E as u32. */
    public static final int GRAPH_HEADER_BYTES = 16;
    /** Bytes of a table file header: num_rows, num_cols as u32. */
    public static final int TABLE_HEADER_BYTES = 8;
    /** Bytes of a task file header: num_seeds, reserved as u32. */
    public static final int TASK_HEADER_BYTES = 8;

    public static long pad8(long x) {
        return (x + 7) & ~7L;
    }

    /** Bytes of an unpadded bitmap of {@code n} items. */
    public static long bitmapBytes(long n) {
        return (n + 7) >>> 3;
    }

    public static Path tableFile(Path dir, String tableName) {
        return dir.resolve(TABLES_DIR).resolve(tableName + BIN_SUFFIX);
    }

    public static Path taskFile(Path dir, String taskName) {
        return dir.resolve(TASKS_DIR).resolve(taskName + BIN_SUFFIX);
    }

    /** {@code 16 + 4 * (2 (N + 1) + 2 E)}. */
    public static long graphFileSize(long nodes, long edges) {
        return GRAPH_HEADER_BYTES + 4 * (2 * (nodes + 1) + 2 * edges);
    }

    /** Bytes of one padded value array of {@code n} items of {@code width} bytes. */
    private static long array(long n, long width) {
        return pad8(n * width);
    }

    /** Bytes of one column's section(s) in a table file with {@code rows} rows. */
    public static long columnSectionBytes(SemanticType stype, long rows) {
        long bitmap = pad8(bitmapBytes(rows));
        return switch (stype) {
            case IDENTIFIER -> bitmap;
            case NUMERICAL, CATEGORICAL, TEXT -> bitmap + array(rows, 4);
            case TIMESTAMP -> bitmap + array(rows, 4L * TIMESTAMP_DIM);
            case BOOLEAN -> 2 * bitmap;
            case IGNORED -> 0;
        };
    }

    /**
     * Offset of the value array (or, for Boolean, the value bitmap) inside a column section: right
     * after the validity bitmap. For Identifier there is only the presence bitmap.
     */
    public static long valuesOffsetInSection(long rows) {
        return pad8(bitmapBytes(rows));
    }

    /** Exact size of a table file whose columns have {@code stypes}, in {@code col_range} order. */
    public static long tableFileSize(List<SemanticType> stypes, long rows) {
        long size = TABLE_HEADER_BYTES;
        for (SemanticType t : stypes) {
            size += columnSectionBytes(t, rows);
        }
        return size;
    }

    /** Offset of the observation times in a task file with {@code seeds} seeds. */
    public static long taskObservationTimesOffset(long seeds) {
        return TASK_HEADER_BYTES + array(seeds, 4);
    }

    /** Offset of the target validity bitmap in a task file. */
    public static long taskValidityOffset(long seeds) {
        return taskObservationTimesOffset(seeds) + 8 * seeds;
    }

    /** Offset of the target values in a task file. */
    public static long taskValuesOffset(long seeds) {
        return taskValidityOffset(seeds) + pad8(bitmapBytes(seeds));
    }

    /**
     * Exact size of a task file; {@code target} must be Numerical, Timestamp, Boolean or
     * Categorical.
     */
    public static long taskFileSize(SemanticType target, long seeds) {
        long values = switch (target) {
            case NUMERICAL, CATEGORICAL -> array(seeds, 4);
            case TIMESTAMP -> array(seeds, 4L * TIMESTAMP_DIM);
            case BOOLEAN -> pad8(bitmapBytes(seeds));
            default -> throw new IllegalArgumentException("a task target cannot be " + target);
        };
        return taskValuesOffset(seeds) + values;
    }
}
