package io.github.semyonsinchenko.safetensors.sampler.db;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes the files of a database directory in the exact layout {@link Database} reads (and
 * headwater reads), through {@link SectionWriter}: whole files from values in memory (the
 * synthetic generator), or, with the {@code open} methods, a file whose header this class writes
 * and whose sections the caller appends (a parallel preprocessor concatenating its tasks' pieces).
 * Each file is new (it must not exist) and its size is checked against {@link DatabaseLayout};
 * null cells get 0 in their value slots. Creating the directory, writing every file, and
 * publishing the directory (e.g. a rename) is the caller's job.
 */
public final class DatabaseWriter {
    private DatabaseWriter() {}

    /**
     * Writes {@code metadata.json}, validated first, in the reference's layout.
     *
     * @param dir the database directory
     * @param metadata what to write
     * @throws IOException if the file exists or cannot be written
     * @throws SamplerDatabaseException if {@code metadata} is not self-consistent
     */
    public static void writeMetadata(Path dir, DatabaseMetadata metadata) throws IOException {
        Path file = dir.resolve(DatabaseLayout.METADATA_FILE);
        metadata.validate(file);
        try (OutputStream out = Files.newOutputStream(file, java.nio.file.StandardOpenOption.CREATE_NEW)) {
            MetadataJson.write(metadata, out);
        }
    }

    /**
     * Opens {@code graph.bin} and writes its header; the caller appends the outgoing row pointers
     * and neighbours, then the incoming ones, as u32s, and calls {@link SectionWriter#finish},
     * which checks the size.
     *
     * @param dir the database directory
     * @param nodes the rows of the database
     * @param edges the foreign-key edges
     * @return the writer, after the header
     * @throws IOException if the file exists or cannot be written
     */
    public static SectionWriter openGraph(Path dir, long nodes, long edges) throws IOException {
        SectionWriter w = SectionWriter.create(dir.resolve(DatabaseLayout.GRAPH_FILE),
                DatabaseLayout.graphFileSize(nodes, edges));
        for (int i = 0; i < 2; i++) {
            w.u32((int) nodes);
            w.u32((int) edges);
        }
        return w;
    }

    /**
     * Writes {@code graph.bin} from the outgoing CSR; the incoming CSR is its transpose, each list
     * in ascending source order.
     *
     * @param dir the database directory
     * @param outPtr the outgoing row pointers, {@code N + 1} of them from 0 to {@code E}
     * @param outIdx the outgoing neighbours, {@code E} rows
     * @throws IOException if the file exists or cannot be written
     * @throws IllegalArgumentException if the arrays are not a CSR of rows {@code [0, N)}
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
        try (SectionWriter w = openGraph(dir, n, e)) {
            for (int[] array : new int[][] {outPtr, outIdx, inPtr, inIdx}) {
                w.u32s(array, 0, array.length);
            }
            w.sync();
            w.finish();
        }
    }

    /**
     * Opens {@code tables/<name>.bin} (creating {@code tables/}) and writes its header; the caller
     * appends each column's {@link DatabaseLayout#columnSections} in order, ending each with
     * {@link SectionWriter#endSection}, and calls {@link SectionWriter#finish}, which checks the size.
     *
     * @param dir the database directory
     * @param name the table's name
     * @param rows the table's rows
     * @param stypes its columns' semantic types, in {@code col_range} order, Ignored included
     * @return the writer, after the header
     * @throws IOException if the file exists or cannot be written
     */
    public static SectionWriter openTable(Path dir, String name, long rows, List<SemanticType> stypes)
            throws IOException {
        Path file = DatabaseLayout.tableFile(dir, name);
        Files.createDirectories(file.getParent());
        SectionWriter w = SectionWriter.create(file, DatabaseLayout.tableFileSize(stypes, rows));
        w.u32((int) rows);
        w.u32(stypes.size());
        return w;
    }

    /**
     * Writes {@code tables/<name>.bin}.
     *
     * @param dir the database directory
     * @param name the table's name
     * @param rows the table's rows
     * @param columns one {@link ColumnValues} per column of {@code col_range}, Ignored included
     * @throws IOException if the file exists or cannot be written
     * @throws IllegalArgumentException if a column does not have {@code rows} rows
     */
    public static void writeTable(Path dir, String name, int rows, List<ColumnValues> columns) throws IOException {
        for (int c = 0; c < columns.size(); c++) {
            if (columns.get(c).rows() != rows) {
                throw new IllegalArgumentException(DatabaseLayout.tableFile(dir, name) + ": column " + c + " has "
                        + columns.get(c).rows() + " rows, the table " + rows);
            }
        }
        try (SectionWriter w = openTable(dir, name, rows, columns.stream().map(ColumnValues::stype).toList())) {
            for (ColumnValues v : columns) {
                writeValues(w, v, rows);
            }
            w.sync();
            w.finish();
        }
    }

    /**
     * Opens {@code tasks/<name>.bin} (creating {@code tasks/}) and writes its header; the caller
     * appends the {@link DatabaseLayout#taskSections} in order, ending each with
     * {@link SectionWriter#endSection}, and calls {@link SectionWriter#finish}, which checks the size.
     *
     * @param dir the database directory
     * @param name the task's name
     * @param seeds the task's seeds
     * @param target the target's semantic type
     * @return the writer, after the header
     * @throws IOException if the file exists or cannot be written
     * @throws IllegalArgumentException if {@code target} cannot be a task target
     */
    public static SectionWriter openTask(Path dir, String name, long seeds, SemanticType target)
            throws IOException {
        if (!target.isTaskTarget()) {
            throw new IllegalArgumentException("a task target cannot be " + target);
        }
        Path file = DatabaseLayout.taskFile(dir, name);
        Files.createDirectories(file.getParent());
        SectionWriter w = SectionWriter.create(file, DatabaseLayout.taskFileSize(target, seeds));
        w.u32((int) seeds);
        w.u32(0);
        return w;
    }

    /**
     * Writes {@code tasks/<name>.bin}.
     *
     * @param dir the database directory
     * @param name the task's name
     * @param anchorRows each seed's anchor row
     * @param observationTimes each seed's observation time, {@link DatabaseLayout#NO_OBSERVATION_TIME} for none
     * @param target the targets: Numerical z-scores with the task's own stats, Timestamp features,
     *     Boolean, or Categorical indices
     * @throws IOException if the file exists or cannot be written
     * @throws IllegalArgumentException if the arrays differ in length or the target's stype cannot be a task's
     */
    public static void writeTask(Path dir, String name, int[] anchorRows, long[] observationTimes,
            ColumnValues target) throws IOException {
        int n = anchorRows.length;
        if (observationTimes.length != n || target.rows() != n) {
            throw new IllegalArgumentException("a task needs one anchor row, observation time and target per seed");
        }
        try (SectionWriter w = openTask(dir, name, n, target.stype())) {
            w.u32s(anchorRows, 0, n);
            w.endSection();
            for (long t : observationTimes) {
                w.i64(t);
            }
            w.endSection();
            writeValues(w, target, n);
            w.sync();
            w.finish();
        }
    }

    /** Supplies embedding rows. */
    @FunctionalInterface
    public interface EmbeddingSource {
        /**
         * Fills one row.
         *
         * @param index the row's index
         * @param row the row's {@value DatabaseLayout#EMBEDDING_DIM} values, to fill
         */
        void row(long index, float[] row);
    }

    /**
     * Opens an embedding file ({@code column_embeddings.bin}, {@code categorical_embeddings.bin}
     * or {@code text_embeddings.bin}); the caller appends its rows of
     * {@value DatabaseLayout#EMBEDDING_DIM} f16 values and calls {@link SectionWriter#finish},
     * which checks the size.
     *
     * @param file the file
     * @param rows its rows
     * @return the writer
     * @throws IOException if the file exists or cannot be written
     */
    public static SectionWriter openEmbeddings(Path file, long rows) throws IOException {
        return SectionWriter.create(file, rows * DatabaseLayout.EMBEDDING_ROW_BYTES);
    }

    /**
     * Writes an embedding file ({@code column_embeddings.bin}, {@code categorical_embeddings.bin}
     * or {@code text_embeddings.bin}), each value rounded to f16 (nearest even).
     *
     * @param file the file
     * @param rows its rows
     * @param source the rows' values, or null for zero vectors (as {@code --skip-embeddings} writes)
     * @throws IOException if the file exists or cannot be written
     */
    public static void writeEmbeddings(Path file, long rows, EmbeddingSource source) throws IOException {
        try (SectionWriter w = openEmbeddings(file, rows)) {
            float[] row = new float[DatabaseLayout.EMBEDDING_DIM];
            short[] halves = new short[DatabaseLayout.EMBEDDING_DIM];
            for (long r = 0; r < rows; r++) {
                if (source != null) {
                    source.row(r, row);
                    for (int i = 0; i < row.length; i++) {
                        halves[i] = Float.floatToFloat16(row[i]);
                    }
                }
                w.u16s(halves, 0, halves.length);
            }
            w.sync();
            w.finish();
        }
    }

    /** A column's (or a task target's) sections, as {@link DatabaseLayout#columnSections} lays them out. */
    private static void writeValues(SectionWriter w, ColumnValues v, int rows) throws IOException {
        switch (v) {
            case ColumnValues.Identifier id -> {
                w.bitmap(id.present(), rows);
                w.endSection();
            }
            case ColumnValues.Numerical num -> {
                w.bitmap(num.valid(), rows);
                w.endSection();
                for (int i = 0; i < rows; i++) {
                    w.f32(num.valid()[i] ? num.values()[i] : 0f);
                }
                w.endSection();
            }
            case ColumnValues.Timestamp ts -> {
                w.bitmap(ts.valid(), rows);
                w.endSection();
                int dim = DatabaseLayout.TIMESTAMP_DIM;
                for (int i = 0; i < rows; i++) {
                    for (int k = 0; k < dim; k++) {
                        w.f32(ts.valid()[i] ? ts.features()[i * dim + k] : 0f);
                    }
                }
                w.endSection();
            }
            case ColumnValues.Bool b -> {
                w.bitmap(b.valid(), rows);
                w.endSection();
                for (int i = 0; i < rows; i++) {
                    w.bit(b.valid()[i] && b.values()[i]);
                }
                w.endSection();
            }
            case ColumnValues.Indexed idx -> {
                w.bitmap(idx.valid(), rows);
                w.endSection();
                for (int i = 0; i < rows; i++) {
                    w.u32(idx.valid()[i] ? idx.indices()[i] : 0);
                }
                w.endSection();
            }
            case ColumnValues.Ignored ignored -> { }
        }
    }
}
