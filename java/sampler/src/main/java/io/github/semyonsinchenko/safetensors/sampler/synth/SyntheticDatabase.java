package io.github.semyonsinchenko.safetensors.sampler.synth;

import io.github.semyonsinchenko.safetensors.sampler.db.ColumnMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnValues;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.TableMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.ValueEncoding;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Writes a valid headwater database of any size: four tables shaped like a Q&amp;A site (users,
 * posts, comments, votes) with primary keys, foreign keys (including self-references and nullable
 * ones), a temporal column per table, every stype (an Ignored column too), ~5% nulls, and three
 * tasks (Numerical with an observation time, Boolean without, Categorical). About 2.1 FK edges
 * per row: 2 M rows give about 4.3 M edges. Deterministic for a seed. For tests, the demo and
 * benchmarks; the files follow {@link DatabaseLayout} exactly.
 *
 * <p>The directory is written next to its final place and renamed into it, so a failure leaves
 * nothing behind.
 */
public final class SyntheticDatabase {
    private SyntheticDatabase() {}

    /** What goes into the embedding files. */
    public enum Embeddings { ZERO, RANDOM_UNIT }

    /** What was written. */
    public record Summary(Path dir, int rows, long edges, int columns, int tasks, long categoricalRows,
            long textRows) {}

    private static final long T0 = 1_262_304_000_000_000L; // 2010-01-01
    private static final long T1 = 1_704_067_200_000_000L; // 2024-01-01
    private static final long DAY_US = 86_400_000_000L;
    private static final double NULL_RATE = 0.05;

    /**
     * Writes a database of about {@code rows} rows (at least 40) into {@code dir}, which must not
     * exist yet.
     */
    public static Summary generate(Path dir, int rows, long seed, Embeddings embeddings) throws IOException {
        if (rows < 40) {
            throw new IllegalArgumentException("a synthetic database needs at least 40 rows, got " + rows);
        }
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
            Summary s = new Generator(rows, seed, embeddings).write(tmp);
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

    /** One column's generated values (only the arrays its stype needs). */
    private static final class Col {
        final String name;
        final SemanticType stype;
        final int fkTable; // table index the FK points to, or -1
        boolean[] valid;
        double[] num;
        long[] ts;
        boolean[] bool;
        int[] idx;
        List<String> categories;
        int catEmbStart;

        Col(String name, SemanticType stype, int fkTable) {
            this.name = name;
            this.stype = stype;
            this.fkTable = fkTable;
        }
    }

    private static final class Table {
        final String name;
        final int rows;
        final List<Col> cols = new ArrayList<>();
        int rowStart;
        int colStart;
        int temporal = -1;

        Table(String name, int rows) {
            this.name = name;
            this.rows = rows;
        }

        Col add(Col c) {
            cols.add(c);
            return c;
        }
    }

    private static final class Generator {
        final SplittableRandom rnd;
        final Embeddings embeddings;
        final List<Table> tables = new ArrayList<>();
        final int textRows;
        int categoricalRows;

        Generator(int rows, long seed, Embeddings embeddings) {
            this.rnd = new SplittableRandom(seed);
            this.embeddings = embeddings;
            int users = Math.max(4, rows * 8 / 100);
            int posts = Math.max(8, rows * 22 / 100);
            int votes = Math.max(8, rows * 30 / 100);
            int comments = Math.max(8, rows - users - posts - votes);
            this.textRows = Math.max(16, rows / 20);
            Table u = new Table("users", users);
            u.add(pk());
            u.add(categorical("Country", List.of("AR", "AU", "BR", "CA", "CN", "DE", "ES", "FR", "GB", "IN", "IT",
                    "JP", "KR", "MX", "NL", "PL", "RU", "SE", "US", "ZA"), users));
            u.add(timestamp("CreationDate", users));
            u.temporal = 2;
            u.add(numerical("Reputation", users, 1000, 800));
            u.add(bool("IsActive", users));
            u.add(new Col("DisplayName", SemanticType.IGNORED, -1));
            u.add(text("AboutMe", users));
            tables.add(u);

            Table p = new Table("posts", posts);
            p.add(pk());
            p.add(fk("OwnerUserId", posts, 0, users, 0.0));
            p.add(fk("ParentId", posts, 1, posts, 0.5));
            p.add(numerical("Score", posts, 3, 10));
            p.add(text("Body", posts));
            p.add(bool("IsClosed", posts));
            p.add(categorical("Tag", tags(), posts));
            p.add(timestamp("CreationDate", posts));
            p.temporal = 7;
            tables.add(p);

            Table c = new Table("comments", comments);
            c.add(pk());
            c.add(fk("PostId", comments, 1, posts, 0.0));
            c.add(fk("UserId", comments, 0, users, 0.0));
            c.add(fk("ReplyToId", comments, 2, comments, 0.5));
            c.add(numerical("Score", comments, 1, 2));
            c.add(text("Text", comments));
            c.add(timestamp("CreationDate", comments));
            c.temporal = 6;
            tables.add(c);

            Table v = new Table("votes", votes);
            v.add(pk());
            v.add(fk("PostId", votes, 1, posts, 0.0));
            v.add(fk("UserId", votes, 0, users, 0.0));
            v.add(fk("CommentId", votes, 2, comments, 0.3));
            v.add(categorical("VoteType", List.of("Accept", "Bounty", "Close", "Delete", "Down", "Favorite",
                    "Spam", "Up"), votes));
            v.add(timestamp("CreationDate", votes));
            v.temporal = 5;
            tables.add(v);

            int row = 0;
            int col = 0;
            for (Table t : tables) {
                t.rowStart = row;
                t.colStart = col;
                row += t.rows;
                col += t.cols.size();
            }
        }

        private static List<String> tags() {
            List<String> tags = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                tags.add(String.format(Locale.ROOT, "tag%02d", i));
            }
            return tags;
        }

        private boolean[] validity(int n, double nullRate) {
            boolean[] v = new boolean[n];
            for (int i = 0; i < n; i++) {
                v[i] = rnd.nextDouble() >= nullRate;
            }
            return v;
        }

        private Col pk() {
            return new Col("Id", SemanticType.IDENTIFIER, -1); // all present; filled in write()
        }

        private Col fk(String name, int n, int target, int targetRows, double extraNulls) {
            Col c = new Col(name, SemanticType.IDENTIFIER, target);
            c.valid = validity(n, extraNulls);
            c.idx = new int[n];
            for (int i = 0; i < n; i++) {
                c.idx[i] = rnd.nextInt(targetRows);
            }
            return c;
        }

        private Col numerical(String name, int n, double mean, double spread) {
            Col c = new Col(name, SemanticType.NUMERICAL, -1);
            c.valid = validity(n, NULL_RATE);
            c.num = new double[n];
            for (int i = 0; i < n; i++) {
                c.num[i] = Math.rint(mean + spread * rnd.nextDouble() * rnd.nextDouble() * 4 - spread);
            }
            return c;
        }

        private Col timestamp(String name, int n) {
            Col c = new Col(name, SemanticType.TIMESTAMP, -1);
            c.valid = validity(n, NULL_RATE);
            c.ts = new long[n];
            for (int i = 0; i < n; i++) {
                c.ts[i] = rnd.nextLong(T0, T1);
            }
            return c;
        }

        private Col bool(String name, int n) {
            Col c = new Col(name, SemanticType.BOOLEAN, -1);
            c.valid = validity(n, NULL_RATE);
            c.bool = new boolean[n];
            for (int i = 0; i < n; i++) {
                c.bool[i] = rnd.nextInt(3) == 0;
            }
            return c;
        }

        private Col categorical(String name, List<String> values, int n) {
            Col c = new Col(name, SemanticType.CATEGORICAL, -1);
            c.valid = validity(n, NULL_RATE);
            c.categories = values.stream().sorted().toList();
            c.idx = new int[n];
            for (int i = 0; i < n; i++) {
                c.idx[i] = rnd.nextInt(values.size());
            }
            return c;
        }

        private Col text(String name, int n) {
            Col c = new Col(name, SemanticType.TEXT, -1);
            c.valid = validity(n, NULL_RATE);
            c.idx = new int[n];
            return c; // indices drawn in write(), once the vocabulary size is known
        }

        Summary write(Path dir) throws IOException {
            int totalRows = 0;
            List<ColumnMetadata> columns = new ArrayList<>();
            List<ColumnStats> stats = new ArrayList<>();
            List<TableMetadata> tableMeta = new ArrayList<>();
            // Global timestamp statistics over every non-null timestamp cell.
            double sum = 0;
            long count = 0;
            for (Table t : tables) {
                for (Col c : t.cols) {
                    if (c.stype == SemanticType.TIMESTAMP) {
                        for (int i = 0; i < t.rows; i++) {
                            if (c.valid[i]) {
                                sum += (double) c.ts[i];
                                count++;
                            }
                        }
                    }
                }
            }
            double tsMean = count == 0 ? 0.0 : sum / count;
            double sq = 0;
            for (Table t : tables) {
                for (Col c : t.cols) {
                    if (c.stype == SemanticType.TIMESTAMP) {
                        for (int i = 0; i < t.rows; i++) {
                            if (c.valid[i]) {
                                double d = (double) c.ts[i] - tsMean;
                                sq += d * d;
                            }
                        }
                    }
                }
            }
            double tsStd = count < 2 ? 1.0 : Math.sqrt(sq / (count - 1));

            for (Table t : tables) {
                for (Col c : t.cols) {
                    if (c.stype == SemanticType.CATEGORICAL) {
                        c.catEmbStart = categoricalRows;
                        categoricalRows += c.categories.size();
                    } else if (c.stype == SemanticType.TEXT) {
                        for (int i = 0; i < t.rows; i++) {
                            c.idx[i] = c.valid[i] ? rnd.nextInt(textRows) : 0;
                        }
                    }
                }
            }

            // Edges, row-major so that each row's outgoing edges are contiguous.
            long edgeCount = 0;
            for (Table t : tables) {
                for (Col c : t.cols) {
                    if (c.fkTable >= 0) {
                        for (int i = 0; i < t.rows; i++) {
                            if (c.valid[i]) {
                                edgeCount++;
                            }
                        }
                    }
                }
                totalRows += t.rows;
            }
            int[] outPtr = new int[totalRows + 1];
            int[] outIdx = new int[Math.toIntExact(edgeCount)];
            int k = 0;
            for (Table t : tables) {
                for (int i = 0; i < t.rows; i++) {
                    outPtr[t.rowStart + i] = k;
                    for (Col c : t.cols) {
                        if (c.fkTable >= 0 && c.valid[i]) {
                            outIdx[k++] = tables.get(c.fkTable).rowStart + c.idx[i];
                        }
                    }
                }
            }
            outPtr[totalRows] = k;
            DatabaseWriter.writeGraph(dir, outPtr, outIdx);

            // Tables.
            for (Table t : tables) {
                List<ColumnValues> values = new ArrayList<>();
                for (Col c : t.cols) {
                    int fkTarget = c.fkTable >= 0 ? tables.get(c.fkTable).colStart : -1;
                    columns.add(new ColumnMetadata(c.name, c.stype, fkTarget));
                    switch (c.stype) {
                        case IDENTIFIER -> {
                            boolean[] present = c.valid != null ? c.valid : allTrue(t.rows);
                            values.add(new ColumnValues.Identifier(present));
                            stats.add(new ColumnStats.Identifier(nulls(present, t.rows)));
                        }
                        case NUMERICAL -> {
                            double[] ms = meanStd(c.num, c.valid, t.rows);
                            float[] z = new float[t.rows];
                            for (int i = 0; i < t.rows; i++) {
                                z[i] = c.valid[i] ? ValueEncoding.zScore(c.num[i], ms[0], ms[1]) : 0f;
                            }
                            values.add(new ColumnValues.Numerical(c.valid, z));
                            stats.add(new ColumnStats.Numerical(nulls(c.valid, t.rows), ms[2], ms[3], ms[0], ms[1]));
                        }
                        case TIMESTAMP -> {
                            double[] asDouble = new double[t.rows];
                            long min = Long.MAX_VALUE;
                            long max = Long.MIN_VALUE;
                            float[] features = new float[t.rows * DatabaseLayout.TIMESTAMP_DIM];
                            for (int i = 0; i < t.rows; i++) {
                                asDouble[i] = (double) c.ts[i];
                                if (c.valid[i]) {
                                    min = Math.min(min, c.ts[i]);
                                    max = Math.max(max, c.ts[i]);
                                    ValueEncoding.timestampFeatures(c.ts[i], tsMean, tsStd, features,
                                            i * DatabaseLayout.TIMESTAMP_DIM);
                                }
                            }
                            double[] ms = meanStd(asDouble, c.valid, t.rows);
                            values.add(new ColumnValues.Timestamp(c.valid, features));
                            boolean any = min != Long.MAX_VALUE;
                            stats.add(new ColumnStats.Timestamp(nulls(c.valid, t.rows), any ? min : 0, any ? max : 0,
                                    ms[0], ms[1]));
                        }
                        case BOOLEAN -> {
                            long trues = 0;
                            long falses = 0;
                            for (int i = 0; i < t.rows; i++) {
                                if (c.valid[i]) {
                                    if (c.bool[i]) {
                                        trues++;
                                    } else {
                                        falses++;
                                    }
                                }
                            }
                            values.add(new ColumnValues.Bool(c.valid, c.bool));
                            stats.add(new ColumnStats.Boolean(nulls(c.valid, t.rows), trues, falses));
                        }
                        case CATEGORICAL -> {
                            int[] global = new int[t.rows];
                            for (int i = 0; i < t.rows; i++) {
                                global[i] = c.catEmbStart + c.idx[i];
                            }
                            values.add(new ColumnValues.Indexed(SemanticType.CATEGORICAL, c.valid, global));
                            stats.add(new ColumnStats.Categorical(nulls(c.valid, t.rows), c.categories, c.catEmbStart));
                        }
                        case TEXT -> {
                            values.add(new ColumnValues.Indexed(SemanticType.TEXT, c.valid, c.idx));
                            stats.add(new ColumnStats.Text(nulls(c.valid, t.rows)));
                        }
                        case IGNORED -> {
                            values.add(new ColumnValues.Ignored(t.rows));
                            stats.add(new ColumnStats.Ignored());
                        }
                    }
                }
                DatabaseWriter.writeTable(dir, t.name, t.rows, values);
                tableMeta.add(new TableMetadata(t.name, t.colStart, t.colStart + t.cols.size(), t.rowStart,
                        t.rowStart + t.rows, t.colStart, t.temporal >= 0 ? t.colStart + t.temporal : -1));
            }

            // Tasks.
            List<TaskMetadata> tasks = new ArrayList<>();
            Table posts = tables.get(1);
            Col postTime = posts.cols.get(posts.temporal);
            Col postScore = posts.cols.get(3);
            {
                int s = posts.rows;
                int[] anchors = new int[s];
                long[] times = new long[s];
                boolean[] valid = new boolean[s];
                double[] target = new double[s];
                for (int i = 0; i < s; i++) {
                    anchors[i] = posts.rowStart + i;
                    times[i] = postTime.valid[i] ? postTime.ts[i] : DatabaseLayout.NO_OBSERVATION_TIME;
                    valid[i] = postScore.valid[i];
                    target[i] = postScore.num[i] * 0.5 + rnd.nextInt(5);
                }
                double[] ms = meanStd(target, valid, s);
                float[] z = new float[s];
                for (int i = 0; i < s; i++) {
                    z[i] = valid[i] ? ValueEncoding.zScore(target[i], ms[0], ms[1]) : 0f;
                }
                DatabaseWriter.writeTask(dir, "post_score_30d", anchors, times, new ColumnValues.Numerical(valid, z));
                tasks.add(new TaskMetadata("post_score_30d", 1, SemanticType.NUMERICAL, s,
                        new ColumnStats.Numerical(nulls(valid, s), ms[2], ms[3], ms[0], ms[1])));
            }
            Table users = tables.get(0);
            Col active = users.cols.get(4);
            {
                int s = users.rows;
                int[] anchors = new int[s];
                long[] times = new long[s];
                long trues = 0;
                long falses = 0;
                for (int i = 0; i < s; i++) {
                    anchors[i] = users.rowStart + i;
                    times[i] = DatabaseLayout.NO_OBSERVATION_TIME;
                    if (active.valid[i]) {
                        if (active.bool[i]) {
                            trues++;
                        } else {
                            falses++;
                        }
                    }
                }
                DatabaseWriter.writeTask(dir, "user_is_active", anchors, times,
                        new ColumnValues.Bool(active.valid, active.bool));
                tasks.add(new TaskMetadata("user_is_active", 0, SemanticType.BOOLEAN, s,
                        new ColumnStats.Boolean(nulls(active.valid, s), trues, falses)));
            }
            Table votes = tables.get(3);
            Col voteType = votes.cols.get(4);
            Col voteTime = votes.cols.get(votes.temporal);
            {
                int s = votes.rows;
                int[] anchors = new int[s];
                long[] times = new long[s];
                int[] global = new int[s];
                for (int i = 0; i < s; i++) {
                    anchors[i] = votes.rowStart + i;
                    times[i] = voteTime.valid[i] ? voteTime.ts[i] : DatabaseLayout.NO_OBSERVATION_TIME;
                    global[i] = voteType.catEmbStart + voteType.idx[i];
                }
                DatabaseWriter.writeTask(dir, "vote_kind", anchors, times,
                        new ColumnValues.Indexed(SemanticType.CATEGORICAL, voteType.valid, global));
                tasks.add(new TaskMetadata("vote_kind", 3, SemanticType.CATEGORICAL, s,
                        new ColumnStats.Categorical(nulls(voteType.valid, s), voteType.categories,
                                voteType.catEmbStart)));
            }

            DatabaseWriter.EmbeddingSource source = embeddings == Embeddings.ZERO ? null : this::randomUnit;
            DatabaseWriter.writeEmbeddings(dir.resolve(DatabaseLayout.COLUMN_EMBEDDINGS_FILE), columns.size(), source);
            DatabaseWriter.writeEmbeddings(dir.resolve(DatabaseLayout.CATEGORICAL_EMBEDDINGS_FILE), categoricalRows,
                    source);
            DatabaseWriter.writeEmbeddings(dir.resolve(DatabaseLayout.TEXT_EMBEDDINGS_FILE), textRows, source);

            DatabaseWriter.writeMetadata(dir, new DatabaseMetadata(tableMeta, columns, stats, tasks, tsMean, tsStd));
            return new Summary(dir, totalRows, edgeCount, columns.size(), tasks.size(), categoricalRows, textRows);
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

        private static boolean[] allTrue(int n) {
            boolean[] b = new boolean[n];
            java.util.Arrays.fill(b, true);
            return b;
        }

        private static long nulls(boolean[] valid, int n) {
            long k = 0;
            for (int i = 0; i < n; i++) {
                if (!valid[i]) {
                    k++;
                }
            }
            return k;
        }

        /** {mean, sample std (1.0 when n <= 1), min, max} over the valid values (min/max 0 when none). */
        private static double[] meanStd(double[] v, boolean[] valid, int n) {
            double sum = 0;
            long count = 0;
            double min = Double.POSITIVE_INFINITY;
            double max = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < n; i++) {
                if (valid[i]) {
                    sum += v[i];
                    count++;
                    min = Math.min(min, v[i]);
                    max = Math.max(max, v[i]);
                }
            }
            double mean = count == 0 ? 0.0 : sum / count;
            double sq = 0;
            for (int i = 0; i < n; i++) {
                if (valid[i]) {
                    sq += (v[i] - mean) * (v[i] - mean);
                }
            }
            double std = count <= 1 ? 1.0 : Math.sqrt(sq / (count - 1));
            return new double[] {mean, std, count == 0 ? 0.0 : min, count == 0 ? 0.0 : max};
        }
    }
}
