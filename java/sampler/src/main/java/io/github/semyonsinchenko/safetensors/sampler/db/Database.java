package io.github.semyonsinchenko.safetensors.sampler.db;

import io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
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
    private volatile ChildTimes childTimes;
    private volatile boolean closed;

    /** The files of {@code dir}, already opened and checked by {@link DatabaseFiles}. */
    Database(Path dir, DatabaseMetadata metadata, List<MappedFile> files, Graph graph,
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
     * @param dir the database directory
     * @return the open database
     * @throws SamplerDatabaseException if a file is missing or breaks a rule of the format
     * @throws IOException if a file cannot be read or mapped
     * @throws MappedFileFaultException if a file is truncated while it is being checked
     */
    public static Database open(Path dir) throws IOException {
        return DatabaseFiles.open(dir);
    }

    /**
     * The folder the database was opened from.
     *
     * @return the database directory
     */
    public Path directory() {
        return dir;
    }

    /**
     * The parsed {@code metadata.json}: tables, columns, tasks and global statistics.
     *
     * @return the metadata
     */
    public DatabaseMetadata metadata() {
        return metadata;
    }

    /**
     * The foreign-key graph over all rows, in both directions.
     *
     * @return the graph
     */
    public Graph graph() {
        return graph;
    }

    /**
     * The number of tables.
     *
     * @return the table count
     */
    public int numTables() {
        return tables.size();
    }

    /**
     * The cells of one table.
     *
     * @param tableIdx the table's index, in {@code [0, numTables())}
     * @return the table's data
     * @throws IndexOutOfBoundsException if there is no such table
     */
    public TableData table(int tableIdx) {
        return tables.get(tableIdx);
    }

    /**
     * The number of prediction tasks.
     *
     * @return the task count
     */
    public int numTasks() {
        return tasks.size();
    }

    /**
     * The seeds of one task.
     *
     * @param taskIdx the task's index, in {@code [0, numTasks())}
     * @return the task's data
     * @throws IndexOutOfBoundsException if there is no such task
     */
    public TaskData task(int taskIdx) {
        return tasks.get(taskIdx);
    }

    /**
     * The number of rows over all tables (the graph's nodes).
     *
     * @return the row count
     */
    public int numRows() {
        return metadata.numRows();
    }

    /**
     * The table holding global row {@code row}: the last table whose row start is {@code <= row}.
     *
     * @param row a global row index, in {@code [0, numRows())}
     * @return the table's index
     */
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

    /**
     * {@code [C, 256]} f16: one row per global column (its name's embedding).
     *
     * @return the column embeddings
     */
    public EmbeddingTable columnEmbeddings() {
        return columnEmbeddings;
    }

    /**
     * {@code [Vc, 256]} f16: one row per category of every categorical column.
     *
     * @return the categorical embeddings
     */
    public EmbeddingTable categoricalEmbeddings() {
        return categoricalEmbeddings;
    }

    /**
     * {@code [Vt, 256]} f16: one row per distinct text.
     *
     * @return the text embeddings
     */
    public EmbeddingTable textEmbeddings() {
        return textEmbeddings;
    }

    /**
     * The children's times for the temporal filter (built on first use from the mapped files and
     * kept in memory while the database is open).
     *
     * @return the index, one entry per incoming edge in {@code in_col_idx} order
     */
    public ChildTimes childTimes() {
        ChildTimes c = childTimes;
        if (c == null) {
            synchronized (this) {
                c = childTimes;
                if (c == null) {
                    c = ChildTimes.build(this);
                    childTimes = c;
                }
            }
        }
        return c;
    }

    /**
     * Whether the files are still mapped.
     *
     * @return false once {@link #close()} was called
     */
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
        closed = true;
        for (MappedFile f : files) {
            f.close(); // idempotent
        }
    }

    @Override
    public String toString() {
        return "Database[" + dir + ", " + tables.size() + " tables, " + metadata.numRows() + " rows, "
                + graph.numEdges() + " edges, " + tasks.size() + " tasks" + (closed ? ", closed" : "") + "]";
    }
}
