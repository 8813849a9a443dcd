package io.github.semyonsinchenko.safetensors.preprocess;

import static org.apache.spark.sql.functions.array;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat_ws;
import static org.apache.spark.sql.functions.element_at;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.pmod;
import static org.apache.spark.sql.functions.when;
import static org.apache.spark.sql.functions.xxhash64;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;

/**
 * Writes a synthetic Q&A-site database in headwater's input layout at any scale: users, posts
 * (self-referencing answers), comments (replies to comments) and votes, with primary keys, foreign
 * keys, temporal columns, every semantic type (nulls included, an ignored column, a described
 * column) and three tasks (numerical with an observation time, boolean, categorical). Values are
 * hashes of the row id and a seed, so the output does not depend on Spark's partitioning. Tables
 * are Parquet directories (one file each when {@code files == 1}).
 */
public final class DataGenerator {
    private DataGenerator() {}

    private static final String[] WORDS = ("spark parquet jvm tensor vector sampler graph query index cache"
            + " memory disk thread lock stream batch shard table column row join filter sort merge hash tree"
            + " node edge path file page buffer queue task stage driver worker heap stack error retry"
            + " timeout schema type value null key").split(" ");
    private static final String[] LOCATIONS = {"Berlin", "Paris", "Tokyo", "Lima", "Oslo", "Cairo", "Austin",
        "Seoul", "Zürich", "São Paulo"};
    private static final long START_SECONDS = 1_577_836_800L; // 2020-01-01T00:00:00Z
    private static final long SPAN_SECONDS = 3L * 365 * 86_400;

    /** Row counts per table for about {@code total} rows: users 5 %, posts 25 %, comments 30 %, votes 40 %. */
    public record Sizes(long users, long posts, long comments, long votes) {
        public static Sizes of(long total) {
            long users = Math.max(2, total / 20);
            long posts = Math.max(2, total / 4);
            long comments = Math.max(1, total * 3 / 10);
            return new Sizes(users, posts, comments, Math.max(1, total - users - posts - comments));
        }

        public long total() {
            return users + posts + comments + votes;
        }
    }

    /** Writes {@code dataDir/metadata/<dataset>.json} and {@code dataDir/raw/<dataset>/<table>.parquet}. */
    public static Sizes generate(SparkSession spark, Path dataDir, String dataset, long totalRows, long seed,
            int files) {
        Sizes n = Sizes.of(totalRows);
        Path raw = dataDir.resolve("raw").resolve(dataset);
        write(users(spark, n, seed), raw.resolve("users.parquet"), files);
        write(posts(spark, n, seed), raw.resolve("posts.parquet"), files);
        write(comments(spark, n, seed), raw.resolve("comments.parquet"), files);
        write(votes(spark, n, seed), raw.resolve("votes.parquet"), files);
        try {
            Files.createDirectories(dataDir.resolve("metadata"));
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                    .writeValue(dataDir.resolve("metadata").resolve(dataset + ".json").toFile(), schemaJson(dataset));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return n;
    }

    private static void write(Dataset<Row> df, Path path, int files) {
        df.repartition(Math.max(1, files)).write().mode(SaveMode.Overwrite).parquet(path.toString());
    }

    /** A pseudo-random non-negative long from the row id, a per-column salt and the seed. */
    private static Column h(String salt, long seed) {
        return pmod(xxhash64(col("id"), lit(salt), lit(seed)), lit(Long.MAX_VALUE));
    }

    private static Column below(String salt, long seed, long bound) {
        return pmod(h(salt, seed), lit(bound));
    }

    private static Column nullEvery(Column value, String salt, long seed, int oneIn) {
        return when(below(salt + "-null", seed, oneIn).equalTo(0), lit(null)).otherwise(value);
    }

    private static Column time(String salt, long seed) {
        return org.apache.spark.sql.functions.timestamp_seconds(lit(START_SECONDS).plus(below(salt, seed, SPAN_SECONDS)))
                .cast("timestamp_ntz");
    }

    private static Column words(String salt, long seed, int count, int vocabulary) {
        Column[] w = new Column[count];
        Column pool = array(Arrays.stream(WORDS).limit(vocabulary).map(org.apache.spark.sql.functions::lit)
                .toArray(Column[]::new));
        for (int i = 0; i < count; i++) {
            w[i] = element_at(pool, below(salt + i, seed, Math.min(vocabulary, WORDS.length)).plus(1).cast("int"));
        }
        return concat_ws(" ", w);
    }

    private static Column pick(String[] values, String salt, long seed) {
        Column pool = array(Arrays.stream(values).map(org.apache.spark.sql.functions::lit).toArray(Column[]::new));
        return element_at(pool, below(salt, seed, values.length).plus(1).cast("int"));
    }

    private static Dataset<Row> users(SparkSession spark, Sizes n, long seed) {
        return spark.range(n.users()).select(
                col("id").as("Id"),
                nullEvery(below("inviter", seed, n.users()), "inviter", seed, 3).as("InvitedByUserId"),
                concat_ws("_", lit("user"), col("id")).as("DisplayName"),
                below("rep", seed, 10_000).as("Reputation"),
                when(below("mod", seed, 20).equalTo(0), true).otherwise(false).as("IsModerator"),
                nullEvery(pick(LOCATIONS, "loc", seed), "loc", seed, 5).as("Location"),
                nullEvery(words("about", seed, 4, 30), "about", seed, 2).as("AboutMe"),
                time("created", seed).as("CreationDate"));
    }

    private static Dataset<Row> posts(SparkSession spark, Sizes n, long seed) {
        Column isAnswer = col("id").geq(lit(n.posts() / 2)).and(below("type", seed, 3).notEqual(0));
        return spark.range(n.posts()).select(
                col("id").as("Id"),
                when(isAnswer, 2).otherwise(1).as("PostTypeId"),
                nullEvery(below("owner", seed, n.users()), "owner", seed, 20).as("OwnerUserId"),
                when(isAnswer, below("parent", seed, Math.max(1, n.posts() / 2))).as("ParentId"),
                when(org.apache.spark.sql.functions.not(isAnswer).and(below("acc", seed, 2).equalTo(0)), below("accid", seed, n.posts()))
                        .as("AcceptedAnswerId"),
                below("score", seed, 200).minus(20).as("Score"),
                nullEvery(words("title", seed, 3, WORDS.length), "title", seed, 4).as("Title"),
                words("body", seed, 8, WORDS.length).as("Body"),
                when(below("closed", seed, 10).equalTo(0), true).otherwise(false).as("IsClosed"),
                time("created", seed).as("CreationDate"));
    }

    private static Dataset<Row> comments(SparkSession spark, Sizes n, long seed) {
        return spark.range(n.comments()).select(
                col("id").as("Id"),
                below("post", seed, n.posts()).as("PostId"),
                nullEvery(below("user", seed, n.users()), "user", seed, 10).as("UserId"),
                nullEvery(below("reply", seed, Math.max(1, n.comments())), "reply", seed, 2).as("ReplyToCommentId"),
                below("score", seed, 10).as("Score"),
                words("text", seed, 5, WORDS.length).as("Text"),
                time("created", seed).as("CreationDate"));
    }

    private static Dataset<Row> votes(SparkSession spark, Sizes n, long seed) {
        return spark.range(n.votes()).select(
                col("id").as("Id"),
                below("post", seed, n.posts() + 10).as("PostId"), // a few dangling keys: edges that do not resolve
                nullEvery(below("user", seed, n.users()), "user", seed, 4).as("UserId"),
                below("type", seed, 5).plus(1).as("VoteTypeId"),
                when(below("bounty", seed, 25).equalTo(0), below("amount", seed, 500)).as("BountyAmount"),
                time("created", seed).as("CreationDate"));
    }

    private static ObjectNode schemaJson(String dataset) {
        ObjectMapper m = new ObjectMapper();
        ObjectNode root = m.createObjectNode();
        root.put("name", dataset);
        ObjectNode tables = root.putObject("tables");
        ObjectNode users = table(tables, "users");
        column(users, "Id", "identifier", null, null);
        column(users, "InvitedByUserId", "identifier", "users.Id", null);
        column(users, "DisplayName", "ignored", null, null);
        column(users, "Reputation", "numerical", null, "reputation points");
        column(users, "IsModerator", "boolean", null, null);
        column(users, "Location", "categorical", null, null);
        column(users, "AboutMe", "text", null, "free-text user bio");
        column(users, "CreationDate", "timestamp", null, null);
        ObjectNode posts = table(tables, "posts");
        column(posts, "Id", "identifier", null, null);
        column(posts, "PostTypeId", "categorical", null, "1 = question, 2 = answer");
        column(posts, "OwnerUserId", "identifier", "users.Id", null);
        column(posts, "ParentId", "identifier", "posts.Id", null);
        column(posts, "AcceptedAnswerId", "identifier", "posts.Id", null);
        column(posts, "Score", "numerical", null, null);
        column(posts, "Title", "text", null, null);
        column(posts, "Body", "text", null, null);
        column(posts, "IsClosed", "boolean", null, null);
        column(posts, "CreationDate", "timestamp", null, null);
        ObjectNode comments = table(tables, "comments");
        column(comments, "Id", "identifier", null, null);
        column(comments, "PostId", "identifier", "posts.Id", null);
        column(comments, "UserId", "identifier", "users.Id", null);
        column(comments, "ReplyToCommentId", "identifier", "comments.Id", null);
        column(comments, "Score", "numerical", null, null);
        column(comments, "Text", "text", null, null);
        column(comments, "CreationDate", "timestamp", null, null);
        ObjectNode votes = table(tables, "votes");
        column(votes, "Id", "identifier", null, null);
        column(votes, "PostId", "identifier", "posts.Id", null);
        column(votes, "UserId", "identifier", "users.Id", null);
        column(votes, "VoteTypeId", "categorical", null, null);
        column(votes, "BountyAmount", "numerical", null, null);
        column(votes, "CreationDate", "timestamp", null, null);
        ObjectNode tasks = root.putObject("tasks");
        task(tasks, "predict_num_comments_30d", "SELECT p.Id, p.CreationDate + INTERVAL '30 days' AS obs_time,"
                + " COUNT(c.Id) AS num_comments FROM 'posts.parquet' p LEFT JOIN 'comments.parquet' c"
                + " ON c.PostId = p.Id AND c.CreationDate <= p.CreationDate + INTERVAL '30 days'"
                + " GROUP BY p.Id, p.CreationDate ORDER BY p.Id", "posts", "Id", "num_comments", "numerical", "obs_time");
        task(tasks, "predict_has_accepted_answer", "SELECT Id, (AcceptedAnswerId IS NOT NULL) AS has_accepted"
                + " FROM 'posts.parquet' WHERE PostTypeId = 1 ORDER BY Id", "posts", "Id", "has_accepted", "boolean", null);
        task(tasks, "predict_vote_type", "SELECT Id, VoteTypeId FROM 'votes.parquet' ORDER BY Id", "votes", "Id",
                "VoteTypeId", "categorical", null);
        return root;
    }

    private static ObjectNode table(ObjectNode tables, String name) {
        ObjectNode t = tables.putObject(name);
        t.put("primary_key", "Id");
        t.put("temporal_column", "CreationDate");
        return t.putObject("columns");
    }

    private static void column(ObjectNode columns, String name, String stype, String fk, String description) {
        ObjectNode c = columns.putObject(name);
        c.put("stype", stype);
        if (fk != null) {
            c.put("foreign_key", fk);
        }
        if (description != null) {
            c.put("description", description);
        }
    }

    private static void task(ObjectNode tasks, String name, String query, String anchor, String key, String target,
            String stype, String obs) {
        ObjectNode t = tasks.putObject(name);
        t.put("query", query);
        t.put("anchor_table", anchor);
        t.put("anchor_key", key);
        t.put("target_column", target);
        t.put("target_stype", stype);
        if (obs != null) {
            t.put("observation_time_column", obs);
        }
    }
}
