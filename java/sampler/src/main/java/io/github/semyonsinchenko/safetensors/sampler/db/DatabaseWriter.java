package io.github.semyonsinchenko.safetensors.sampler.db;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes the files of a database directory in the exact layout {@link Database} reads (and
 * headwater reads): for preprocessors and the synthetic generator. Each method writes one new file
 * (it must not exist) and checks its size against {@link DatabaseLayout}; null cells get 0 in their
 * value slots. Creating the directory, writing every file, and publishing the directory (e.g. a
 * rename) is the caller's job.
 */
public final class DatabaseWriter {
    private DatabaseWriter() {}

    /** {@code metadata.json}, validated first, in the reference's layout. */
    public static void writeMetadata(Path dir, DatabaseMetadata metadata) throws IOException {
        Path file = dir.resolve(DatabaseLayout.METADATA_FILE);
        metadata.validate(file);
        try (OutputStream out = Files.newOutputStream(file, java.nio.file.StandardOpenOption.CREATE_NEW)) {
            MetadataJson.write(metadata, out);
        }
    }

    /**
     * {@code graph.bin} from the outgoing CSR ({@code outPtr[N + 1]}, {@code outIdx[E]}); the
     * incoming CSR is its transpose, each list in ascending source order.
     */
    public static void writeGraph(Path dir, int[] outPtr, int[] outIdx) throws IOException {
        int n = outPtr.length - 1;
        int e = outIdx.length;
        if (n < 0 || outPtr[0] != 0 || outPtr[n] != e) {
            throw new IllegalArgumentException("outPtr must start at 0 and end at outIdx.length = " + e);
        }
        int[] inPtr = new int[n + 1];
        for (int r = 0; r < n; r++) {
            if (outPtr[r + 1] < outPtr[r]) {
                throw new IllegalArgumentException("outPtr decreases at row " + r);
            }
        }
        for (int v : outIdx) {
            if (v < 0 || v >= n) {
                throw new IllegalArgumentException("edge target " + v + " is not a row in [0, " + n + ")");
            }
            inPtr[v + 1]++;
        }
        for (int r = 0; r < n; r++) {
            inPtr[r + 1] += inPtr[r];
        }
        int[] fill = inPtr.clone();
        int[] inIdx = new int[e];
        for (int r = 0; r < n; r++) {
            for (int k = outPtr[r]; k < outPtr[r + 1]; k++) {
                inIdx[fill[outIdx[k]]++] = r;
            }
        }
        Path file = dir.resolve(DatabaseLayout.GRAPH_FILE);
        try (LittleEndianFile f = new LittleEndianFile(file)) {
            f.u32(n);
            f.u32(e);
            f.u32(n);
            f.u32(e);
            for (int[] array : new int[][] {outPtr, outIdx, inPtr, inIdx}) {
                for (int v : array) {
                    f.u32(v);
                }
            }
            checkSize(file, f, DatabaseLayout.graphFileSize(n, e));
        }
    }

    /** {@code tables/<name>.bin}: one {@link ColumnValues} per column of {@code col_range}, Ignored included. */
    public static void writeTable(Path dir, String name, int rows, List<ColumnValues> columns) throws IOException {
        Path file = DatabaseLayout.tableFile(dir, name);
        Files.createDirectories(file.getParent());
        try (LittleEndianFile f = new LittleEndianFile(file)) {
            f.u32(rows);
            f.u32(columns.size());
            long expected = DatabaseLayout.TABLE_HEADER_BYTES;
            for (int c = 0; c < columns.size(); c++) {
                ColumnValues v = columns.get(c);
                if (v.rows() != rows) {
                    throw new IllegalArgumentException(file + ": column " + c + " has " + v.rows() + " rows, the table "
                            + rows);
                }
                writeValues(f, v, rows);
                expected += DatabaseLayout.columnSectionBytes(v.stype(), rows);
            }
            checkSize(file, f, expected);
        }
    }

    /**
     * {@code tasks/<name>.bin}: seeds' anchor rows, observation times ({@link
     * DatabaseLayout#NO_OBSERVATION_TIME} for none) and targets (Numerical z-scores with the task's
     * own stats, Timestamp features, Boolean, or Categorical indices).
     */
    public static void writeTask(Path dir, String name, int[] anchorRows, long[] observationTimes,
            ColumnValues target) throws IOException {
        int n = anchorRows.length;
        if (observationTimes.length != n || target.rows() != n) {
            throw new IllegalArgumentException("a task needs one anchor row, observation time and target per seed");
        }
        if (!target.stype().isTaskTarget()) {
            throw new IllegalArgumentException("a task target cannot be " + target.stype());
        }
        Path file = DatabaseLayout.taskFile(dir, name);
        Files.createDirectories(file.getParent());
        try (LittleEndianFile f = new LittleEndianFile(file)) {
            f.u32(n);
            f.u32(0);
            for (int a : anchorRows) {
                f.u32(a);
            }
            f.pad8();
            for (long t : observationTimes) {
                f.i64(t);
            }
            writeValues(f, target, n);
            checkSize(file, f, DatabaseLayout.taskFileSize(target.stype(), n));
        }
    }

    /** Supplies embedding rows: fills {@code row} (256 floats) for row {@code index}. */
    @FunctionalInterface
    public interface EmbeddingSource {
        void row(long index, float[] row);
    }

    /**
     * An embedding file ({@code column_embeddings.bin}, {@code categorical_embeddings.bin} or
     * {@code text_embeddings.bin}): {@code rows} rows of 256 values, each rounded to f16 (nearest
     * even). A null source writes zero vectors (as {@code --skip-embeddings} does).
     */
    public static void writeEmbeddings(Path file, long rows, EmbeddingSource source) throws IOException {
        try (LittleEndianFile f = new LittleEndianFile(file)) {
            float[] row = new float[DatabaseLayout.EMBEDDING_DIM];
            for (long r = 0; r < rows; r++) {
                if (source != null) {
                    source.row(r, row);
                }
                for (float x : row) {
                    f.u16(source == null ? 0 : Float.floatToFloat16(x));
                }
            }
            checkSize(file, f, rows * DatabaseLayout.EMBEDDING_ROW_BYTES);
        }
    }

    private static void writeValues(LittleEndianFile f, ColumnValues v, int rows) throws IOException {
        switch (v) {
            case ColumnValues.Identifier id -> f.bitmap(id.present(), rows);
            case ColumnValues.Numerical num -> {
                f.bitmap(num.valid(), rows);
                for (int i = 0; i < rows; i++) {
                    f.f32(num.valid()[i] ? num.values()[i] : 0f);
                }
                f.pad8();
            }
            case ColumnValues.Timestamp ts -> {
                f.bitmap(ts.valid(), rows);
                int dim = DatabaseLayout.TIMESTAMP_DIM;
                for (int i = 0; i < rows; i++) {
                    for (int k = 0; k < dim; k++) {
                        f.f32(ts.valid()[i] ? ts.features()[i * dim + k] : 0f);
                    }
                }
                f.pad8();
            }
            case ColumnValues.Bool b -> {
                f.bitmap(b.valid(), rows);
                boolean[] bits = new boolean[rows];
                for (int i = 0; i < rows; i++) {
                    bits[i] = b.valid()[i] && b.values()[i];
                }
                f.bitmap(bits, rows);
            }
            case ColumnValues.Indexed idx -> {
                f.bitmap(idx.valid(), rows);
                for (int i = 0; i < rows; i++) {
                    f.u32(idx.valid()[i] ? idx.indices()[i] : 0);
                }
                f.pad8();
            }
            case ColumnValues.Ignored ignored -> { }
        }
    }

    private static void checkSize(Path file, LittleEndianFile f, long expected) {
        if (f.position() != expected) {
            throw new IllegalStateException(file + ": wrote " + f.position() + " bytes, the layout needs " + expected);
        }
    }
}
