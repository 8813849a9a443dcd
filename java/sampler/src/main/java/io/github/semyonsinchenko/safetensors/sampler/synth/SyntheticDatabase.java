package io.github.semyonsinchenko.safetensors.sampler.synth;

import io.github.semyonsinchenko.safetensors.sampler.db.ColumnMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnValues;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.TableMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.ValueEncoding;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData.Column;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData.Table;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData.Task;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Writes the {@link SyntheticData} of a row count and a seed straight into a sampler database,
 * encoded as headwater's preprocessor would encode its raw values (statistics, z-scores, timestamp
 * features, vocabulary indices; the text vocabulary is the dataset's text indices), through
 * {@link DatabaseWriter}. Any size from {@value SyntheticData#MIN_ROWS} rows; 2 M rows give about
 * 4.3 M edges. For tests, the demo and benchmarks.
 *
 * <p>The directory is written next to its final place and renamed into it, so a failure leaves
 * nothing behind.
 */
public final class SyntheticDatabase {
    private SyntheticDatabase() {}

    /** What goes into the embedding files. */
    public enum Embeddings {
        /** Zero vectors, as headwater's {@code --skip-embeddings} writes. */
        ZERO,
        /** Random directions of unit length, drawn after the data from the same generator. */
        RANDOM_UNIT
    }

    /**
     * What was written.
     *
     * @param dir the database directory
     * @param rows the rows of all tables
     * @param edges the foreign-key edges
     * @param columns the columns of all tables
     * @param tasks the tasks
     * @param categoricalRows the rows of the categorical embeddings
     * @param textRows the rows of the text embeddings
     */
    public record Summary(Path dir, int rows, long edges, int columns, int tasks, long categoricalRows,
            long textRows) {}

    /**
     * Writes the database of {@link SyntheticData#generate SyntheticData.generate(rows, seed)}.
     *
     * @param dir the database directory; it must not exist yet
     * @param rows about how many rows, at least {@value SyntheticData#MIN_ROWS}
     * @param seed the seed of every value
     * @param embeddings what the embedding files hold
     * @return what was written
     * @throws IOException if {@code dir} exists or a file cannot be written
     * @throws IllegalArgumentException if {@code rows} is too small
     */
    public static Summary generate(Path dir, int rows, long seed, Embeddings embeddings) throws IOException {
        SyntheticData data = SyntheticData.generate(rows, seed);
        if (Files.exists(dir)) {
            throw new IOException(dir + ": already exists; the generator writes a new directory");
        }
        Path parent = dir.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        Path tmp = parent.resolve("." + dir.getFileName() + "." + UUID.randomUUID() + ".tmp");
        boolean success = false;
        try {
            Files.createDirectories(tmp.resolve(DatabaseLayout.TABLES_DIR));
            Files.createDirectories(tmp.resolve(DatabaseLayout.TASKS_DIR));
            Summary s = new Encoder(data, embeddings).write(tmp);
            Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
            success = true;
            return new Summary(dir, s.rows(), s.edges(), s.columns(), s.tasks(), s.categoricalRows(), s.textRows());
        } finally {
            if (!success) {
                deleteTree(tmp);
            }
        }
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(p)) {
            for (Path q : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(q);
            }
        }
    }

    /** One dataset's encoding: the vocabularies' layout, then each file. */
    private static final class Encoder {
        final SyntheticData data;
        final Embeddings embeddings;
        final SplittableRandom rnd;
        /** Per column in table order, its first row of the categorical embeddings (categorical columns). */
        final List<Integer> catEmbStarts = new ArrayList<>();
        final int categoricalRows;
        final double tsMean;
        final double tsStd;

        Encoder(SyntheticData data, Embeddings embeddings) {
            this.data = data;
            this.embeddings = embeddings;
            this.rnd = data.random();
            int categorical = 0;
            for (Table t : data.tables()) {
                for (Column c : t.columns()) {
                    catEmbStarts.add(categorical);
                    if (c.stype() == SemanticType.CATEGORICAL) {
                        categorical += c.categories().size();
                    }
                }
            }
            this.categoricalRows = categorical;
            Moments global = Moments.globalTimestamps(data);
            this.tsMean = global.mean();
            this.tsStd = global.std();
        }

        Summary write(Path dir) throws IOException {
            long edges = writeGraph(dir);
            List<ColumnMetadata> columns = new ArrayList<>();
            List<ColumnStats> stats = new ArrayList<>();
            List<TableMetadata> tables = new ArrayList<>();
            for (Table t : data.tables()) {
                List<ColumnValues> values = new ArrayList<>();
                for (int j = 0; j < t.columns().size(); j++) {
                    Column c = t.columns().get(j);
                    int fkTarget = c.foreignTable() >= 0 ? data.tables().get(c.foreignTable()).colStart() : -1;
                    columns.add(new ColumnMetadata(c.name(), c.stype(), fkTarget));
                    values.add(values(c, t.rows(), t.colStart() + j));
                    stats.add(stats(c, t.rows(), t.colStart() + j));
                }
                DatabaseWriter.writeTable(dir, t.name(), t.rows(), values);
                tables.add(new TableMetadata(t.name(), t.colStart(), t.colStart() + t.columns().size(), t.rowStart(),
                        t.rowStart() + t.rows(), t.colStart(), t.colStart() + t.temporal()));
            }
            List<TaskMetadata> tasks = new ArrayList<>();
            for (Task task : data.tasks()) {
                tasks.add(writeTask(dir, task));
            }
            DatabaseWriter.EmbeddingSource source = embeddings == Embeddings.ZERO ? null : this::randomUnit;
            DatabaseWriter.writeEmbeddings(dir.resolve(DatabaseLayout.COLUMN_EMBEDDINGS_FILE), columns.size(), source);
            DatabaseWriter.writeEmbeddings(dir.resolve(DatabaseLayout.CATEGORICAL_EMBEDDINGS_FILE), categoricalRows,
                    source);
            DatabaseWriter.writeEmbeddings(dir.resolve(DatabaseLayout.TEXT_EMBEDDINGS_FILE), data.textValues(), source);
            DatabaseWriter.writeMetadata(dir, new DatabaseMetadata(tables, columns, stats, tasks, tsMean, tsStd));
            Table last = data.tables().getLast();
            return new Summary(dir, last.rowStart() + last.rows(), edges, columns.size(), tasks.size(),
                    categoricalRows, data.textValues());
        }

        /** {@code graph.bin}: each row's foreign keys in column order; returns the edge count. */
        long writeGraph(Path dir) throws IOException {
            Table last = data.tables().getLast();
            int totalRows = last.rowStart() + last.rows();
            long edgeCount = 0;
            for (Table t : data.tables()) {
                for (Column c : t.columns()) {
                    if (c.foreignTable() >= 0) {
                        for (int i = 0; i < t.rows(); i++) {
                            if (c.isValid(i)) {
                                edgeCount++;
                            }
                        }
                    }
                }
            }
            int[] outPtr = new int[totalRows + 1];
            int[] outIdx = new int[Math.toIntExact(edgeCount)];
            int k = 0;
            for (Table t : data.tables()) {
                for (int i = 0; i < t.rows(); i++) {
                    outPtr[t.rowStart() + i] = k;
                    for (Column c : t.columns()) {
                        if (c.foreignTable() >= 0 && c.isValid(i)) {
                            outIdx[k++] = data.tables().get(c.foreignTable()).rowStart() + c.index(i);
                        }
                    }
                }
            }
            outPtr[totalRows] = k;
            DatabaseWriter.writeGraph(dir, outPtr, outIdx);
            return edgeCount;
        }

        /** A column's (or a task target's) encoded values; {@code column} is its global index (-1 for a label). */
        ColumnValues values(Column c, int rows, int column) {
            boolean[] valid = Moments.validity(c, rows);
            return switch (c.stype()) {
                case IDENTIFIER -> new ColumnValues.Identifier(valid);
                case NUMERICAL -> {
                    Moments m = Moments.of(c.numbers, valid);
                    float[] z = new float[rows];
                    for (int i = 0; i < rows; i++) {
                        z[i] = valid[i] ? ValueEncoding.zScore(c.number(i), m.mean(), m.std()) : 0f;
                    }
                    yield new ColumnValues.Numerical(valid, z);
                }
                case TIMESTAMP -> {
                    float[] features = new float[rows * DatabaseLayout.TIMESTAMP_DIM];
                    for (int i = 0; i < rows; i++) {
                        if (valid[i]) {
                            ValueEncoding.timestampFeatures(c.micros(i), tsMean, tsStd, features,
                                    i * DatabaseLayout.TIMESTAMP_DIM);
                        }
                    }
                    yield new ColumnValues.Timestamp(valid, features);
                }
                case BOOLEAN -> new ColumnValues.Bool(valid, c.booleans);
                case CATEGORICAL -> {
                    int[] global = new int[rows];
                    for (int i = 0; i < rows; i++) {
                        global[i] = catEmbStarts.get(column) + c.index(i);
                    }
                    yield new ColumnValues.Indexed(SemanticType.CATEGORICAL, valid, global);
                }
                case TEXT -> new ColumnValues.Indexed(SemanticType.TEXT, valid, c.indices);
                case IGNORED -> new ColumnValues.Ignored(rows);
            };
        }

        /** A column's (or a task target's) statistics; {@code column} is its global index (-1 for a label). */
        ColumnStats stats(Column c, int rows, int column) {
            boolean[] valid = Moments.validity(c, rows);
            long nulls = Moments.nulls(valid);
            return switch (c.stype()) {
                case IDENTIFIER -> new ColumnStats.Identifier(nulls);
                case NUMERICAL -> {
                    Moments m = Moments.of(c.numbers, valid);
                    yield new ColumnStats.Numerical(nulls, m.min(), m.max(), m.mean(), m.std());
                }
                case TIMESTAMP -> {
                    double[] asDouble = new double[rows];
                    long min = Long.MAX_VALUE;
                    long max = Long.MIN_VALUE;
                    for (int i = 0; i < rows; i++) {
                        asDouble[i] = (double) c.micros(i);
                        if (valid[i]) {
                            min = Math.min(min, c.micros(i));
                            max = Math.max(max, c.micros(i));
                        }
                    }
                    Moments m = Moments.of(asDouble, valid);
                    boolean any = min != Long.MAX_VALUE;
                    yield new ColumnStats.Timestamp(nulls, any ? min : 0, any ? max : 0, m.mean(), m.std());
                }
                case BOOLEAN -> {
                    long trues = 0;
                    long falses = 0;
                    for (int i = 0; i < rows; i++) {
                        if (valid[i]) {
                            if (c.bool(i)) {
                                trues++;
                            } else {
                                falses++;
                            }
                        }
                    }
                    yield new ColumnStats.Boolean(nulls, trues, falses);
                }
                case CATEGORICAL -> new ColumnStats.Categorical(nulls, c.categories(), catEmbStarts.get(column));
                case TEXT -> new ColumnStats.Text(nulls);
                case IGNORED -> new ColumnStats.Ignored();
            };
        }

        /** A task's file: every anchor row a seed, its target encoded with the target's own statistics. */
        TaskMetadata writeTask(Path dir, Task task) throws IOException {
            Table anchor = data.tables().get(task.anchorTable());
            int s = anchor.rows();
            Column time = anchor.columns().get(anchor.temporal());
            int[] anchors = new int[s];
            long[] times = new long[s];
            for (int i = 0; i < s; i++) {
                anchors[i] = anchor.rowStart() + i;
                times[i] = task.observed() && time.isValid(i) ? time.micros(i) : DatabaseLayout.NO_OBSERVATION_TIME;
            }
            int j = anchor.columns().indexOf(task.target());
            int column = j < 0 ? -1 : anchor.colStart() + j; // a label is no column
            DatabaseWriter.writeTask(dir, task.name(), anchors, times, values(task.target(), s, column));
            return new TaskMetadata(task.name(), task.anchorTable(), task.target().stype(), s,
                    stats(task.target(), s, column));
        }

        /** A random direction, L2-normalized in f32 (rounded to f16 by the writer). */
        private void randomUnit(long index, float[] v) {
            float norm = 0;
            for (int i = 0; i < v.length; i++) {
                v[i] = (float) (rnd.nextDouble() * 2 - 1);
                norm += v[i] * v[i];
            }
            norm = (float) Math.sqrt(norm);
            for (int i = 0; i < v.length; i++) {
                v[i] = norm == 0 ? 0f : v[i] / norm;
            }
        }
    }
}
