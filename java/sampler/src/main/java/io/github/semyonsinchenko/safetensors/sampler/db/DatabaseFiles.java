package io.github.semyonsinchenko.safetensors.sampler.db;

import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.u32;

import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Opening a database directory (spec §2-6): each file read or mapped through {@link MappedFile}
 * and checked in the reference's order (metadata, column embeddings, graph, tables, tasks, the two
 * other embedding tables), then the checks the reference skips (every stored embedding index and
 * categorical target in range). The first rule broken is a {@link SamplerDatabaseException} naming
 * the file; what was mapped by then is unmapped.
 */
final class DatabaseFiles {
    private DatabaseFiles() {}

    /** {@link Database#open}: maps and checks every file; on failure, unmaps what it mapped. */
    static Database open(Path dir) throws IOException {
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
        Graph graph = GraphChecks.read(graphPath, map(graphPath, files), numRows);

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
}
