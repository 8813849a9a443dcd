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

    /** Tables, columns, statistics and tasks (spec §3). */
    public static final String METADATA_FILE = "metadata.json";
    /** One embedding row per column. */
    public static final String COLUMN_EMBEDDINGS_FILE = "column_embeddings.bin";
    /** One embedding row per categorical vocabulary string. */
    public static final String CATEGORICAL_EMBEDDINGS_FILE = "categorical_embeddings.bin";
    /** One embedding row per text vocabulary string. */
    public static final String TEXT_EMBEDDINGS_FILE = "text_embeddings.bin";
    /** The foreign-key graph in both CSR directions. */
    public static final String GRAPH_FILE = "graph.bin";
    /** The directory of the table files. */
    public static final String TABLES_DIR = "tables";
    /** The directory of the task files. */
    public static final String TASKS_DIR = "tasks";
    /** The suffix of table and task files. */
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

    /**
     * Rounds up to a multiple of 8.
     *
     * @param x a size or offset, not negative
     * @return the smallest multiple of 8 not below {@code x}
     */
    public static long pad8(long x) {
        return (x + 7) & ~7L;
    }

    /**
     * The bytes of a bitmap, unpadded.
     *
     * @param n its bits
     * @return its bytes
     */
    public static long bitmapBytes(long n) {
        return (n + 7) >>> 3;
    }

    /**
     * A table's file.
     *
     * @param dir the database directory
     * @param tableName the table's name
     * @return {@code dir/tables/<tableName>.bin}
     */
    public static Path tableFile(Path dir, String tableName) {
        return dir.resolve(TABLES_DIR).resolve(tableName + BIN_SUFFIX);
    }

    /**
     * A task's file.
     *
     * @param dir the database directory
     * @param taskName the task's name
     * @return {@code dir/tasks/<taskName>.bin}
     */
    public static Path taskFile(Path dir, String taskName) {
        return dir.resolve(TASKS_DIR).resolve(taskName + BIN_SUFFIX);
    }

    /**
     * The exact size of {@code graph.bin}: {@code 16 + 4 * (2 (N + 1) + 2 E)}.
     *
     * @param nodes the rows, {@code N}
     * @param edges the edges, {@code E}
     * @return its bytes
     */
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

        /**
         * Whether this is a bitmap.
         *
         * @return true for a bitmap section, false for values
         */
        public boolean isBitmap() {
            return valueBytes == 0;
        }

        /**
         * The section's size in a file of {@code rows} rows.
         *
         * @param rows the rows (seeds, for a task file)
         * @return its bytes, padding included
         */
        public long bytes(long rows) {
            return pad8(isBitmap() ? bitmapBytes(rows) : rows * valueBytes);
        }
    }

    /**
     * The sections of a column in a table file, in order: the validity bitmap (presence for
     * Identifier), then the values (a second bitmap for Boolean); none for Ignored.
     *
     * @param stype the column's semantic type
     * @return its sections, in file order
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
     * The sections of a task file, in order: anchor rows (u32), observation times (i64), the
     * target's validity bitmap, the target values.
     *
     * @param target the target's semantic type: Numerical, Timestamp, Boolean or Categorical
     * @return its sections, in file order
     * @throws IllegalArgumentException if {@code target} cannot be a task target
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

    /**
     * The bytes of one column's sections in a table file.
     *
     * @param stype the column's semantic type
     * @param rows the table's rows
     * @return the bytes of its {@link #columnSections}, padding included
     */
    public static long columnSectionBytes(SemanticType stype, long rows) {
        return bytes(columnSections(stype), rows);
    }

    /**
     * The offset of the value array (or, for Boolean, the value bitmap) inside a column's
     * sections: right after the validity bitmap. For Identifier there is only the presence bitmap.
     *
     * @param rows the table's rows
     * @return the offset from the column's first section
     */
    public static long valuesOffsetInSection(long rows) {
        return Section.BITMAP.bytes(rows);
    }

    /**
     * The exact size of a table file.
     *
     * @param stypes its columns' semantic types, in {@code col_range} order
     * @param rows its rows
     * @return its bytes
     */
    public static long tableFileSize(List<SemanticType> stypes, long rows) {
        long size = TABLE_HEADER_BYTES;
        for (SemanticType t : stypes) {
            size += columnSectionBytes(t, rows);
        }
        return size;
    }

    /**
     * The offset of the observation times in a task file.
     *
     * @param seeds its seeds
     * @return the offset from the file's start
     */
    public static long taskObservationTimesOffset(long seeds) {
        return TASK_HEADER_BYTES + Section.VALUES_4.bytes(seeds);
    }

    /**
     * The offset of the target validity bitmap in a task file.
     *
     * @param seeds its seeds
     * @return the offset from the file's start
     */
    public static long taskValidityOffset(long seeds) {
        return taskObservationTimesOffset(seeds) + Section.VALUES_8.bytes(seeds);
    }

    /**
     * The offset of the target values in a task file.
     *
     * @param seeds its seeds
     * @return the offset from the file's start
     */
    public static long taskValuesOffset(long seeds) {
        return taskValidityOffset(seeds) + Section.BITMAP.bytes(seeds);
    }

    /**
     * The exact size of a task file.
     *
     * @param target the target's semantic type: Numerical, Timestamp, Boolean or Categorical
     * @param seeds its seeds
     * @return its bytes
     * @throws IllegalArgumentException if {@code target} cannot be a task target
     */
    public static long taskFileSize(SemanticType target, long seeds) {
        return TASK_HEADER_BYTES + bytes(taskSections(target), seeds);
    }
}
