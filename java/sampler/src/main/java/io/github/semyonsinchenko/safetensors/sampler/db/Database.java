package io.github.semyonsinchenko.safetensors.sampler.db;

import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.U32;

import io.github.semyonsinchenko.safetensors.format.MappedFileFaultException;
import io.github.semyonsinchenko.safetensors.io.MappedFile;
import io.github.semyonsinchenko.safetensors.kernels.MappedFiles;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A headwater database directory, opened and validated (spec §2-6). Every binary file is mapped
 * read-only through {@link MappedFile}; the database owns those mappings and {@link #close()}
 * unmaps them all. Every check runs at open time, in the reference's order, plus the ones it skips
 * (node count, CSR pointers, every stored index in range): a corrupt or truncated directory is one
 * {@link SamplerDatabaseException} naming the file, the rule, expected and actual, never a crash
 * later while sampling.
 *
 * <p>All views ({@link #graph()}, {@link #table}, {@link #task}, the embedding tables) are
 * thread-safe for reading and valid until {@link #close()}; after it, their reads throw
 * {@link IllegalStateException}. A file truncated by another process while mapped makes reads of
 * the pages it lost fault (the JDK's {@link InternalError}); readers catch that coarsely (once per
 * batch) and turn it into the typed exception with {@link #fault}, and {@link #checkNotTruncated}
 * finds a truncation that lost no whole page (those bytes read back as zeros, without a fault).
 */
public final class Database implements AutoCloseable {

    private final Path dir;
    private final DatabaseMetadata metadata;
    private final List<MappedFile> files;
    private final Graph graph;
    private final List<TableData> tables;
    private final List<TaskData> tasks;
    private final EmbeddingTable columnEmbeddings;
    private final EmbeddingTable categoricalEmbeddings;
    private final EmbeddingTable textEmbeddings;
    private final int[] tableRowStarts;
    private final List<MemorySegment> mappings;
    private volatile boolean closed;

    private Database(Path dir, DatabaseMetadata metadata, List<MappedFile> files, Graph graph,
            List<TableData> tables, List<TaskData> tasks, EmbeddingTable columnEmbeddings,
            EmbeddingTable categoricalEmbeddings, EmbeddingTable textEmbeddings) {
        this.dir = dir;
        this.metadata = metadata;
        this.files = files;
        this.graph = graph;
        this.tables = Collections.unmodifiableList(tables);
        this.tasks = Collections.unmodifiableList(tasks);
        this.columnEmbeddings = columnEmbeddings;
        this.categoricalEmbeddings = categoricalEmbeddings;
        this.textEmbeddings = textEmbeddings;
        this.mappings = files.stream().map(MappedFile::segment).toList();
        this.tableRowStarts = new int[tables.size()];
        for (int i = 0; i < tables.size(); i++) {
            tableRowStarts[i] = metadata.tables().get(i).rowStart();
        }
    }

    /**
     * Opens and validates the database in {@code dir}.
     *
     * @throws SamplerDatabaseException if a file is missing or breaks a rule of the format
     * @throws IOException if a file cannot be read or mapped
     * @throws MappedFileFaultException if a file is truncated while it is being checked
     */
    public static Database open(Path dir) throws IOException {
        List<MappedFile> files = new ArrayList<>();
        boolean success = false;
        try {
            Database db = load(dir, files);
            success = true;
            return db;
        } catch (InternalError e) { // a file truncated while its checks read it
            if (!MappedFiles.isMemoryFault(e)) {
                throw e;
            }
            throw MappedFiles.faultIn("checking the database", e, files.stream().map(MappedFile::segment).toList());
        } finally {
            if (!success) {
                for (MappedFile f : files) {
                    f.close();
                }
            }
        }
    }

    private static Database load(Path dir, List<MappedFile> files) throws IOException {
        // 1. metadata.json
        Path metaPath = dir.resolve(DatabaseLayout.METADATA_FILE);
        byte[] json;
        try {
            json = Files.readAllBytes(metaPath);
        } catch (NoSuchFileException | AccessDeniedException e) {
            throw missing(metaPath, e);
        }
        DatabaseMetadata meta = MetadataJson.parse(json, metaPath);
        meta.validate(metaPath);
        int numColumns = meta.numColumns();
        int numRows = meta.numRows();

        // 2. column embeddings: floor(len / 512) rows must equal C (the reference's rule).
        Path colEmbPath = dir.resolve(DatabaseLayout.COLUMN_EMBEDDINGS_FILE);
        MemorySegment colEmb = map(colEmbPath, files);
        long colRows = colEmb.byteSize() / DatabaseLayout.EMBEDDING_ROW_BYTES;
        if (colRows != numColumns) {
            throw new SamplerDatabaseException(DatabaseRule.EMBEDDING_SIZE, colEmbPath,
                    numColumns + " rows of 512 bytes (one per column)",
                    colEmb.byteSize() + " bytes = " + colRows + " rows");
        }
        EmbeddingTable columnEmbeddings = new EmbeddingTable(colEmb.asSlice(0, colRows * 512), colRows);

        // 3. graph.bin
        Path graphPath = dir.resolve(DatabaseLayout.GRAPH_FILE);
        Graph graph = readGraph(graphPath, map(graphPath, files), numRows);

        // 4. tables, in metadata order
        List<TableData> tables = new ArrayList<>(meta.tables().size());
        for (TableMetadata t : meta.tables()) {
            Path p = DatabaseLayout.tableFile(dir, t.name());
            tables.add(readTable(p, map(p, files), t, meta.columnTypes(t)));
        }

        // 5. tasks, in metadata order
        List<TaskData> tasks = new ArrayList<>(meta.tasks().size());
        for (TaskMetadata t : meta.tasks()) {
            Path p = DatabaseLayout.taskFile(dir, t.name());
            tasks.add(readTask(p, map(p, files), t, numRows));
        }

        // 6. categorical then text embeddings: whole rows (an empty file is an empty table)
        Path catPath = dir.resolve(DatabaseLayout.CATEGORICAL_EMBEDDINGS_FILE);
        EmbeddingTable categorical = readEmbeddings(catPath, map(catPath, files));
        Path textPath = dir.resolve(DatabaseLayout.TEXT_EMBEDDINGS_FILE);
        EmbeddingTable text = readEmbeddings(textPath, map(textPath, files));

        // Checks the reference skips: every stored embedding index in range.
        for (int i = 0; i < tables.size(); i++) {
            checkEmbeddingIndices(DatabaseLayout.tableFile(dir, meta.tables().get(i).name()), tables.get(i),
                    categorical.rows(), text.rows());
        }
        for (int i = 0; i < tasks.size(); i++) {
            TaskData task = tasks.get(i);
            if (task.metadata().targetStype() == SemanticType.CATEGORICAL) {
                for (int s = 0; s < task.numSeeds(); s++) {
                    long v = Integer.toUnsignedLong(task.targetCategorical(s));
                    if (!task.targetIsNull(s) && v >= categorical.rows()) {
                        throw new SamplerDatabaseException(DatabaseRule.INDEX_RANGE,
                                DatabaseLayout.taskFile(dir, task.metadata().name()),
                                "target of seed " + s + " < " + categorical.rows() + " (categorical embeddings)",
                                Long.toString(v));
                    }
                }
            }
        }
        return new Database(dir, meta, List.copyOf(files), graph, tables, tasks, columnEmbeddings, categorical, text);
    }

    private static SamplerDatabaseException missing(Path p, IOException e) {
        return new SamplerDatabaseException(DatabaseRule.FILE_MISSING, p, "a readable file", e.toString(), e);
    }

    private static MemorySegment map(Path p, List<MappedFile> files) throws IOException {
        MappedFile f;
        try {
            f = MappedFile.open(p);
        } catch (NoSuchFileException | AccessDeniedException e) {
            throw missing(p, e);
        }
        files.add(f);
        return f.segment();
    }

    private static long u32(MemorySegment s, long offset) {
        return Integer.toUnsignedLong(s.get(U32, offset));
    }

    private static Graph readGraph(Path p, MemorySegment s, int numRows) throws SamplerDatabaseException {
        if (s.byteSize() < DatabaseLayout.GRAPH_HEADER_BYTES) {
            throw new SamplerDatabaseException(DatabaseRule.FILE_TOO_SHORT, p,
                    "at least " + DatabaseLayout.GRAPH_HEADER_BYTES + " bytes", s.byteSize() + " bytes");
        }
        long n = u32(s, 0);
        long e = u32(s, 4);
        long n2 = u32(s, 8);
        long e2 = u32(s, 12);
        if (n != n2 || e != e2) {
            throw new SamplerDatabaseException(DatabaseRule.GRAPH_HEADER, p, "N, E repeated: " + n + ", " + e,
                    n2 + ", " + e2);
        }
        long size = DatabaseLayout.graphFileSize(n, e);
        if (s.byteSize() != size) {
            throw new SamplerDatabaseException(DatabaseRule.FILE_SIZE, p,
                    size + " bytes for N=" + n + ", E=" + e, s.byteSize() + " bytes");
        }
        if (n != numRows) {
            throw new SamplerDatabaseException(DatabaseRule.NODE_COUNT, p, numRows + " nodes (the rows of all tables)",
                    n + " nodes");
        }
        if (e > Integer.MAX_VALUE) {
            throw new SamplerDatabaseException(DatabaseRule.FILE_SIZE, p, "fewer than 2^31 edges", e + " edges");
        }
        Graph g = new Graph(s, (int) n, (int) e);
        long[] offs = g.arrayOffsets();
        checkRowPointers(p, s, offs[0], n, e, "out_row_ptr");
        checkColumnIndices(p, s, offs[1], e, n, "out_col_idx");
        checkRowPointers(p, s, offs[2], n, e, "in_row_ptr");
        checkColumnIndices(p, s, offs[3], e, n, "in_col_idx");
        return g;
    }

    private static void checkRowPointers(Path p, MemorySegment s, long off, long n, long e, String name)
            throws SamplerDatabaseException {
        long prev = u32(s, off);
        if (prev != 0) {
            throw new SamplerDatabaseException(DatabaseRule.ROW_POINTERS, p, name + "[0] = 0", Long.toString(prev));
        }
        for (long i = 1; i <= n; i++) {
            long v = u32(s, off + 4 * i);
            if (v < prev) {
                throw new SamplerDatabaseException(DatabaseRule.ROW_POINTERS, p,
                        name + "[" + i + "] >= " + prev, Long.toString(v));
            }
            prev = v;
        }
        if (prev != e) {
            throw new SamplerDatabaseException(DatabaseRule.ROW_POINTERS, p, name + "[" + n + "] = E = " + e,
                    Long.toString(prev));
        }
    }

    private static void checkColumnIndices(Path p, MemorySegment s, long off, long e, long n, String name)
            throws SamplerDatabaseException {
        for (long k = 0; k < e; k++) {
            long v = u32(s, off + 4 * k);
            if (v >= n) {
                throw new SamplerDatabaseException(DatabaseRule.INDEX_RANGE, p, name + "[" + k + "] < N = " + n,
                        Long.toString(v));
            }
        }
    }

    private static TableData readTable(Path p, MemorySegment s, TableMetadata t, List<SemanticType> types)
            throws SamplerDatabaseException {
        if (s.byteSize() < DatabaseLayout.TABLE_HEADER_BYTES) {
            throw new SamplerDatabaseException(DatabaseRule.FILE_TOO_SHORT, p,
                    "at least " + DatabaseLayout.TABLE_HEADER_BYTES + " bytes", s.byteSize() + " bytes");
        }
        long rows = u32(s, 0);
        long cols = u32(s, 4);
        if (cols != t.numColumns()) {
            throw new SamplerDatabaseException(DatabaseRule.COLUMN_COUNT, p,
                    t.numColumns() + " columns (col_range [" + t.colStart() + ", " + t.colEnd() + "])", cols + " columns");
        }
        long size = DatabaseLayout.tableFileSize(types, rows);
        if (s.byteSize() != size) {
            throw new SamplerDatabaseException(DatabaseRule.FILE_SIZE, p,
                    size + " bytes for " + rows + " rows of " + cols + " columns", s.byteSize() + " bytes");
        }
        if (rows != t.numRows()) {
            throw new SamplerDatabaseException(DatabaseRule.ROW_COUNT, p,
                    t.numRows() + " rows (row_range [" + t.rowStart() + ", " + t.rowEnd() + "])", rows + " rows");
        }
        return new TableData(t, s, types);
    }

    private static TaskData readTask(Path p, MemorySegment s, TaskMetadata t, int numRows)
            throws SamplerDatabaseException {
        if (s.byteSize() < DatabaseLayout.TASK_HEADER_BYTES) {
            throw new SamplerDatabaseException(DatabaseRule.FILE_TOO_SHORT, p,
                    "at least " + DatabaseLayout.TASK_HEADER_BYTES + " bytes", s.byteSize() + " bytes");
        }
        long seeds = u32(s, 0);
        long size = DatabaseLayout.taskFileSize(t.targetStype(), seeds);
        if (s.byteSize() != size) {
            throw new SamplerDatabaseException(DatabaseRule.FILE_SIZE, p,
                    size + " bytes for " + seeds + " seeds with a " + t.targetStype().jsonName() + " target",
                    s.byteSize() + " bytes");
        }
        if (seeds != t.numSeeds()) {
            throw new SamplerDatabaseException(DatabaseRule.SEED_COUNT, p, t.numSeeds() + " seeds (num_seeds)",
                    seeds + " seeds");
        }
        TaskData task = new TaskData(t, s, (int) seeds);
        for (int i = 0; i < seeds; i++) {
            long a = Integer.toUnsignedLong(task.anchorRow(i));
            if (a >= numRows) {
                throw new SamplerDatabaseException(DatabaseRule.INDEX_RANGE, p,
                        "anchor_rows[" + i + "] < " + numRows + " (total rows)", Long.toString(a));
            }
        }
        return task;
    }

    private static EmbeddingTable readEmbeddings(Path p, MemorySegment s) throws SamplerDatabaseException {
        if (s.byteSize() % DatabaseLayout.EMBEDDING_ROW_BYTES != 0) {
            throw new SamplerDatabaseException(DatabaseRule.EMBEDDING_SIZE, p, "a multiple of 512 bytes",
                    s.byteSize() + " bytes");
        }
        return new EmbeddingTable(s, s.byteSize() / DatabaseLayout.EMBEDDING_ROW_BYTES);
    }

    private static void checkEmbeddingIndices(Path p, TableData t, long categoricalRows, long textRows)
            throws SamplerDatabaseException {
        for (int c = 0; c < t.metadata().numColumns(); c++) {
            SemanticType type = t.type(c);
            if (type != SemanticType.CATEGORICAL && type != SemanticType.TEXT) {
                continue;
            }
            long limit = type == SemanticType.CATEGORICAL ? categoricalRows : textRows;
            for (int r = 0; r < t.numRows(); r++) {
                long v = Integer.toUnsignedLong(t.embeddingIndex(c, r));
                if (v >= limit && t.isValid(c, r)) {
                    throw new SamplerDatabaseException(DatabaseRule.INDEX_RANGE, p,
                            "column " + (t.metadata().colStart() + c) + " row " + r + ": a " + type.jsonName()
                                    + " index < " + limit, Long.toString(v));
                }
            }
        }
    }

    public Path directory() {
        return dir;
    }

    public DatabaseMetadata metadata() {
        return metadata;
    }

    public Graph graph() {
        return graph;
    }

    public int numTables() {
        return tables.size();
    }

    public TableData table(int tableIdx) {
        return tables.get(tableIdx);
    }

    public int numTasks() {
        return tasks.size();
    }

    public TaskData task(int taskIdx) {
        return tasks.get(taskIdx);
    }

    public int numRows() {
        return metadata.numRows();
    }

    /** The table holding global row {@code row}: the last table whose row start is {@code <= row}. */
    public int tableOfRow(int row) {
        int lo = 0;
        int hi = tableRowStarts.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (tableRowStarts[mid] <= row) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** {@code [C, 256]} f16: one row per global column. */
    public EmbeddingTable columnEmbeddings() {
        return columnEmbeddings;
    }

    /** {@code [Vc, 256]} f16. */
    public EmbeddingTable categoricalEmbeddings() {
        return categoricalEmbeddings;
    }

    /** {@code [Vt, 256]} f16. */
    public EmbeddingTable textEmbeddings() {
        return textEmbeddings;
    }

    public boolean isOpen() {
        return !closed;
    }

    /**
     * {@code e} as the typed exception when it is the JDK's error for a read of a page lost to a
     * truncation (see {@link MappedFiles#isMemoryFault}): a {@link MappedFileFaultException} naming
     * the file of this database that is now shorter than mapped, and its first byte lost. Any other
     * error is thrown as it is.
     *
     * @param e the error a read of this database's mapped files raised
     * @param what what was being done, e.g. "building a train batch"
     * @return the exception to throw
     */
    public MappedFileFaultException fault(InternalError e, String what) {
        if (!MappedFiles.isMemoryFault(e)) {
            throw e;
        }
        return MappedFiles.faultIn(what, e, mappings);
    }

    /**
     * Throws the typed {@link MappedFileFaultException} naming the first file of this database that
     * is now shorter than mapped; returns when none is. One {@code fstat} per file, for a check once
     * per batch: a truncation that loses part of a page only reads back as zeros.
     *
     * @param what what was being done, e.g. "building a train batch"
     */
    public void checkNotTruncated(String what) {
        MappedFileFaultException e = MappedFiles.truncation(what, mappings);
        if (e != null) {
            throw e;
        }
    }

    /** Unmaps every file. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (MappedFile f : files) {
                f.close();
            }
        }
    }

    @Override
    public String toString() {
        return "Database[" + dir + ", " + tables.size() + " tables, " + metadata.numRows() + " rows, "
                + graph.numEdges() + " edges, " + tasks.size() + " tasks" + (closed ? ", closed" : "") + "]";
    }
}
