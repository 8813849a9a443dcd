package io.github.semyonsinchenko.safetensors.sampler.synth;

import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The synthetic relational dataset of the project, one schema and one set of values: four tables
 * shaped like a Q&amp;A site (users, posts, comments, votes) with primary keys, foreign keys
 * (self-references and nullable ones included), a temporal column per table, every semantic type
 * (an Ignored column too), about 5% nulls, and three tasks (Numerical observed at its anchor row's
 * time, Boolean without an observation time, Categorical). About 2.1 foreign-key edges per row.
 * Deterministic for a row count and a seed: every value comes from one {@link SplittableRandom}
 * drawn in a fixed order.
 *
 * <p>It has two renderings that carry the same data: {@link SyntheticDatabase} encodes it into a
 * sampler database directly (for tests, the demo and benchmarks, no Spark needed), and the
 * preprocessor's {@code generate} command writes it as headwater's input (Parquet tables and a
 * schema with the tasks' queries), from which the preprocessor builds the same database up to
 * what the encoding chooses (vocabulary order, embeddings). {@link Column#value} is the raw
 * value both start from.
 */
public final class SyntheticData {
    /** The fewest rows: enough for every table to have rows of every kind. */
    public static final int MIN_ROWS = 40;

    private static final long T0 = 1_262_304_000_000_000L; // 2010-01-01
    private static final long T1 = 1_704_067_200_000_000L; // 2024-01-01
    private static final double NULL_RATE = 0.05;
    /** The words text values are made of. */
    private static final String[] WORDS = ("spark parquet jvm tensor vector sampler graph query index cache"
            + " memory disk thread lock stream batch shard table column row join filter sort merge hash tree"
            + " node edge path file page buffer queue task stage driver worker heap stack error retry timeout"
            + " schema type value null key answer question vote comment user post tag score badge edit link"
            + " title body").split(" ");

    private final List<Table> tables = new ArrayList<>();
    private final List<Task> tasks = new ArrayList<>();
    private final int textValues;
    /** Positioned after the data: what a rendering draws next (the database's random embeddings). */
    private final SplittableRandom random;

    /** One column: its schema and, per row, its values (only the arrays its stype needs). */
    public static final class Column {
        private final String name;
        private final SemanticType stype;
        private final int foreignTable;
        boolean[] valid;
        double[] numbers;
        long[] micros;
        boolean[] booleans;
        int[] indices;
        List<String> categories;

        Column(String name, SemanticType stype, int foreignTable) {
            this.name = name;
            this.stype = stype;
            this.foreignTable = foreignTable;
        }

        /**
         * The column's name.
         *
         * @return its name
         */
        public String name() {
            return name;
        }

        /**
         * The column's semantic type.
         *
         * @return its stype
         */
        public SemanticType stype() {
            return stype;
        }

        /**
         * The table a foreign key points to (at its primary key, {@code Id}).
         *
         * @return the table's index, or -1 for a column that is no foreign key
         */
        public int foreignTable() {
            return foreignTable;
        }

        /**
         * Whether a cell holds a value.
         *
         * @param row the row
         * @return false for a null; always true for a primary key
         */
        public boolean isValid(int row) {
            return valid == null || valid[row];
        }

        /**
         * The numbers of a Numerical column.
         *
         * @param row the row
         * @return the row's value (meaningless for a null)
         */
        public double number(int row) {
            return numbers[row];
        }

        /**
         * The times of a Timestamp column.
         *
         * @param row the row
         * @return microseconds since the epoch (meaningless for a null)
         */
        public long micros(int row) {
            return micros[row];
        }

        /**
         * The values of a Boolean column.
         *
         * @param row the row
         * @return the row's value (meaningless for a null)
         */
        public boolean bool(int row) {
            return booleans[row];
        }

        /**
         * The index of a cell's value: a foreign key's target row, a category's index in
         * {@link #categories}, a text's index (its string is {@link SyntheticData#text}).
         *
         * @param row the row
         * @return the index (meaningless for a null)
         */
        public int index(int row) {
            return indices[row];
        }

        /**
         * A Categorical column's categories, sorted.
         *
         * @return the categories, or null for another stype
         */
        public List<String> categories() {
            return categories;
        }

        /**
         * The raw value of a cell, as a table of headwater's input holds it: {@code Long} for
         * identifiers (a primary key is its row, a foreign key its target's row), {@code Double},
         * {@code Long} microseconds for timestamps, {@code Boolean}, {@code String} for categories,
         * texts and the Ignored column.
         *
         * @param row the row
         * @return the value, or null for a null cell
         */
        public Object value(int row) {
            if (!isValid(row)) {
                return null;
            }
            return switch (stype) {
                case IDENTIFIER -> (long) (indices == null ? row : indices[row]);
                case NUMERICAL -> numbers[row];
                case TIMESTAMP -> micros[row];
                case BOOLEAN -> booleans[row];
                case CATEGORICAL -> categories.get(indices[row]);
                case TEXT -> text(indices[row]);
                case IGNORED -> name + " " + row;
            };
        }
    }

    /**
     * One table.
     *
     * @param name the table's name
     * @param rows its rows
     * @param rowStart its first row among all tables' rows, in table order
     * @param colStart its first column among all tables' columns, in table order
     * @param temporal the index of its temporal column among its columns
     * @param columns its columns, the first its primary key {@code Id}
     * @param labels columns of the raw data that are no feature (a task's target): not in the
     *     schema, so never in the database's tables
     */
    public record Table(String name, int rows, int rowStart, int colStart, int temporal, List<Column> columns,
            List<Column> labels) {
        /**
         * Every column of the raw data: the schema's, then the labels.
         *
         * @return the columns
         */
        public List<Column> rawColumns() {
            List<Column> all = new ArrayList<>(columns);
            all.addAll(labels);
            return all;
        }
    }

    /**
     * One task: every row of its anchor table is a seed, in row order.
     *
     * @param name the task's name
     * @param anchorTable the anchor table's index
     * @param target the target: a column or a label of the anchor table
     * @param observed true if a seed is observed at its anchor row's temporal value (none when it
     *     is null), false for no observation time
     */
    public record Task(String name, int anchorTable, Column target, boolean observed) {}

    private SyntheticData(int rows, long seed) {
        if (rows < MIN_ROWS) {
            throw new IllegalArgumentException("a synthetic database needs at least " + MIN_ROWS + " rows, got " + rows);
        }
        SplittableRandom rnd = new SplittableRandom(seed);
        int users = Math.max(4, rows * 8 / 100);
        int posts = Math.max(8, rows * 22 / 100);
        int votes = Math.max(8, rows * 30 / 100);
        int comments = Math.max(8, rows - users - posts - votes);
        this.textValues = Math.max(16, rows / 20);
        Draw d = new Draw(rnd);
        List<Column> u = new ArrayList<>();
        u.add(new Column("Id", SemanticType.IDENTIFIER, -1));
        u.add(d.categorical("Country", List.of("AR", "AU", "BR", "CA", "CN", "DE", "ES", "FR", "GB", "IN", "IT",
                "JP", "KR", "MX", "NL", "PL", "RU", "SE", "US", "ZA"), users));
        u.add(d.timestamp("CreationDate", users));
        u.add(d.numerical("Reputation", users, 1000, 800));
        u.add(d.bool("IsActive", users));
        u.add(new Column("DisplayName", SemanticType.IGNORED, -1));
        u.add(d.text("AboutMe", users));

        List<Column> p = new ArrayList<>();
        p.add(new Column("Id", SemanticType.IDENTIFIER, -1));
        p.add(d.foreignKey("OwnerUserId", posts, 0, users, 0.0));
        p.add(d.foreignKey("ParentId", posts, 1, posts, 0.5));
        p.add(d.numerical("Score", posts, 3, 10));
        p.add(d.text("Body", posts));
        p.add(d.bool("IsClosed", posts));
        p.add(d.categorical("Tag", tags(), posts));
        p.add(d.timestamp("CreationDate", posts));

        List<Column> c = new ArrayList<>();
        c.add(new Column("Id", SemanticType.IDENTIFIER, -1));
        c.add(d.foreignKey("PostId", comments, 1, posts, 0.0));
        c.add(d.foreignKey("UserId", comments, 0, users, 0.0));
        c.add(d.foreignKey("ReplyToId", comments, 2, comments, 0.5));
        c.add(d.numerical("Score", comments, 1, 2));
        c.add(d.text("Text", comments));
        c.add(d.timestamp("CreationDate", comments));

        List<Column> v = new ArrayList<>();
        v.add(new Column("Id", SemanticType.IDENTIFIER, -1));
        v.add(d.foreignKey("PostId", votes, 1, posts, 0.0));
        v.add(d.foreignKey("UserId", votes, 0, users, 0.0));
        v.add(d.foreignKey("CommentId", votes, 2, comments, 0.3));
        v.add(d.categorical("VoteType", List.of("Accept", "Bounty", "Close", "Delete", "Down", "Favorite",
                "Spam", "Up"), votes));
        v.add(d.timestamp("CreationDate", votes));

        // The texts' indices come after every column's other values, as the generator always drew them.
        for (List<Column> columns : List.of(u, p, c, v)) {
            for (Column col : columns) {
                if (col.stype == SemanticType.TEXT) {
                    for (int i = 0; i < col.valid.length; i++) {
                        col.indices[i] = col.valid[i] ? rnd.nextInt(textValues) : 0;
                    }
                }
            }
        }
        // A post's score 30 days on: its score halved plus noise, null where the score is.
        Column postScore = p.get(3);
        Column score30d = new Column("ScoreIn30Days", SemanticType.NUMERICAL, -1);
        score30d.valid = postScore.valid;
        score30d.numbers = new double[posts];
        for (int i = 0; i < posts; i++) {
            score30d.numbers[i] = postScore.numbers[i] * 0.5 + rnd.nextInt(5);
        }

        int row = 0;
        int col = 0;
        String[] names = {"users", "posts", "comments", "votes"};
        int[] sizes = {users, posts, comments, votes};
        int[] temporal = {2, 7, 6, 5};
        List<List<Column>> columns = List.of(u, p, c, v);
        for (int t = 0; t < names.length; t++) {
            tables.add(new Table(names[t], sizes[t], row, col, temporal[t], List.copyOf(columns.get(t)),
                    t == 1 ? List.of(score30d) : List.of()));
            row += sizes[t];
            col += columns.get(t).size();
        }
        tasks.add(new Task("post_score_30d", 1, score30d, true));
        tasks.add(new Task("user_is_active", 0, u.get(4), false)); // IsActive
        tasks.add(new Task("vote_kind", 3, v.get(4), true)); // VoteType
        this.random = rnd;
    }

    /**
     * The dataset of about {@code rows} rows for {@code seed}.
     *
     * @param rows about how many rows all tables hold together, at least {@link #MIN_ROWS}
     * @param seed the seed of every value
     * @return the dataset
     * @throws IllegalArgumentException if {@code rows} is below {@link #MIN_ROWS}
     */
    public static SyntheticData generate(int rows, long seed) {
        return new SyntheticData(rows, seed);
    }

    /**
     * The tables, in order.
     *
     * @return users, posts, comments, votes
     */
    public List<Table> tables() {
        return tables;
    }

    /**
     * The tasks, in order.
     *
     * @return post_score_30d, user_is_active, vote_kind
     */
    public List<Task> tasks() {
        return tasks;
    }

    /**
     * How many distinct texts the text columns draw from (not all of them need occur).
     *
     * @return the number of text indices
     */
    public int textValues() {
        return textValues;
    }

    /**
     * The generator's random numbers, positioned after the data: what a rendering draws next.
     *
     * @return the generator (drawing from it changes it)
     */
    SplittableRandom random() {
        return random;
    }

    /**
     * The string of text index {@code k}: words chosen by the digits of {@code k} (so distinct
     * indices give distinct strings), then a few more chosen by a hash of it.
     *
     * @param k a text index, not negative
     * @return its text
     */
    public static String text(int k) {
        StringBuilder s = new StringBuilder();
        int rest = k;
        do {
            s.append(WORDS[rest % WORDS.length]).append(' ');
            rest /= WORDS.length;
        } while (rest > 0);
        long h = k * 0x9E3779B97F4A7C15L;
        int more = 2 + (int) ((h >>> 60) & 7);
        for (int i = 0; i < more; i++) {
            h = Long.rotateLeft(h, 11) * 0xBF58476D1CE4E5B9L + i;
            s.append(WORDS[(int) Long.remainderUnsigned(h, WORDS.length)]).append(' ');
        }
        s.setLength(s.length() - 1);
        return s.toString();
    }

    private static List<String> tags() {
        List<String> tags = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            tags.add(String.format(Locale.ROOT, "tag%02d", i));
        }
        return tags;
    }

    /** The columns' values, drawn in the order the generator has always drawn them. */
    private record Draw(SplittableRandom rnd) {
        boolean[] validity(int n, double nullRate) {
            boolean[] v = new boolean[n];
            for (int i = 0; i < n; i++) {
                v[i] = rnd.nextDouble() >= nullRate;
            }
            return v;
        }

        /** A column of {@code n} rows with its validity drawn; its values are drawn next. */
        Column column(String name, SemanticType stype, int foreignTable, int n, double nullRate) {
            Column c = new Column(name, stype, foreignTable);
            c.valid = validity(n, nullRate);
            return c;
        }

        Column foreignKey(String name, int n, int target, int targetRows, double extraNulls) {
            Column c = column(name, SemanticType.IDENTIFIER, target, n, extraNulls);
            c.indices = ints(n, targetRows);
            return c;
        }

        Column numerical(String name, int n, double mean, double spread) {
            Column c = column(name, SemanticType.NUMERICAL, -1, n, NULL_RATE);
            c.numbers = new double[n];
            Arrays.setAll(c.numbers, i -> Math.rint(mean + spread * rnd.nextDouble() * rnd.nextDouble() * 4 - spread));
            return c;
        }

        Column timestamp(String name, int n) {
            Column c = column(name, SemanticType.TIMESTAMP, -1, n, NULL_RATE);
            c.micros = new long[n];
            Arrays.setAll(c.micros, i -> rnd.nextLong(T0, T1));
            return c;
        }

        Column bool(String name, int n) {
            Column c = column(name, SemanticType.BOOLEAN, -1, n, NULL_RATE);
            int[] draws = ints(n, 3);
            c.booleans = new boolean[n];
            for (int i = 0; i < n; i++) {
                c.booleans[i] = draws[i] == 0;
            }
            return c;
        }

        Column categorical(String name, List<String> values, int n) {
            Column c = column(name, SemanticType.CATEGORICAL, -1, n, NULL_RATE);
            c.categories = values.stream().sorted().toList();
            c.indices = ints(n, values.size());
            return c;
        }

        /** {@code n} draws of {@code nextInt(bound)}, in order. */
        int[] ints(int n, int bound) {
            int[] v = new int[n];
            Arrays.setAll(v, i -> rnd.nextInt(bound));
            return v;
        }

        /** Validity now; the indices once every column is drawn. */
        Column text(String name, int n) {
            Column c = column(name, SemanticType.TEXT, -1, n, NULL_RATE);
            c.indices = new int[n];
            return c;
        }
    }
}
