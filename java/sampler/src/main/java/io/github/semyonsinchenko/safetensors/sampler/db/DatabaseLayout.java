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

    /**
     * One section of a table or task file: a bitmap (one bit a row, LSB first) or an array of
     * values of {@code valueBytes} bytes a row; each section starts at a multiple of 8 bytes.
     *
     * @param valueBytes bytes per row of a value array, 0 for a bitmap
     */
    public record Section(int valueBytes) {
        /** A bitmap: validity, presence, or Boolean values. */
        public static final Section BITMAP = new Section(0);
        /** u32 or f32 values: numerical z-scores, categorical and text indices, anchor rows. */
        public static final Section VALUES_4 = new Section(4);
        /** i64 values: observation times. */
        public static final Section VALUES_8 = new Section(8);
        /** The features of timestamp cells. */
        public static final Section TIMESTAMPS = new Section(4 * TIMESTAMP_DIM);

        /** True for a bitmap section. */
        public boolean isBitmap() {
            return valueBytes == 0;
        }

        /** The section's bytes for {@code rows} rows, padding included. */
        public long bytes(long rows) {
            return pad8(isBitmap() ? bitmapBytes(rows) : rows * valueBytes);
        }
    }

    /**
     * The sections of a column of {@code stype} in a table file, in order: the validity bitmap
     * (presence for Identifier), then the values (a second bitmap for Boolean); none for Ignored.
     */
    public static List<Section> columnSections(SemanticType stype) {
        return switch (stype) {
            case IDENTIFIER -> List.of(Section.BITMAP);
            case NUMERICAL, CATEGORICAL, TEXT -> List.of(Section.BITMAP, Section.VALUES_4);
            case TIMESTAMP -> List.of(Section.BITMAP, Section.TIMESTAMPS);
            case BOOLEAN -> List.of(Section.BITMAP, Section.BITMAP);
            case IGNORED -> List.of();
        };
    }

    /**
     * The sections of a task file whose target has {@code target}'s stype, in order: anchor rows
     * (u32), observation times (i64), the target's validity bitmap, the target values.
     */
    public static List<Section> taskSections(SemanticType target) {
        Section values = switch (target) {
            case NUMERICAL, CATEGORICAL -> Section.VALUES_4;
            case TIMESTAMP -> Section.TIMESTAMPS;
            case BOOLEAN -> Section.BITMAP;
            default -> throw new IllegalArgumentException("a task target cannot be " + target);
        };
        return List.of(Section.VALUES_4, Section.VALUES_8, Section.BITMAP, values);
    }

    /** Bytes of {@code sections} for {@code rows} rows. */
    private static long bytes(List<Section> sections, long rows) {
        long sum = 0;
        for (Section s : sections) {
            sum += s.bytes(rows);
        }
        return sum;
    }

    /** Bytes of one column's section(s) in a table file with {@code rows} rows. */
    public static long columnSectionBytes(SemanticType stype, long rows) {
        return bytes(columnSections(stype), rows);
    }

    /**
     * Offset of the value array (or, for Boolean, the value bitmap) inside a column section: right
     * after the validity bitmap. For Identifier there is only the presence bitmap.
     */
    public static long valuesOffsetInSection(long rows) {
        return Section.BITMAP.bytes(rows);
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
        return TASK_HEADER_BYTES + Section.VALUES_4.bytes(seeds);
    }

    /** Offset of the target validity bitmap in a task file. */
    public static long taskValidityOffset(long seeds) {
        return taskObservationTimesOffset(seeds) + Section.VALUES_8.bytes(seeds);
    }

    /** Offset of the target values in a task file. */
    public static long taskValuesOffset(long seeds) {
        return taskValidityOffset(seeds) + Section.BITMAP.bytes(seeds);
    }

    /**
     * Exact size of a task file; {@code target} must be Numerical, Timestamp, Boolean or
     * Categorical.
     */
    public static long taskFileSize(SemanticType target, long seeds) {
        return TASK_HEADER_BYTES + bytes(taskSections(target), seeds);
    }
}
