package io.github.semyonsinchenko.safetensors.sampler.db;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.sampler.Fixtures;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every file of the fixture, damaged: one typed exception naming the file and the rule, never a crash. */
class DatabaseCorruptionTest {
    @TempDir
    Path tmp;

    static List<String> binaryFiles() {
        return List.of("graph.bin", "column_embeddings.bin", "categorical_embeddings.bin", "text_embeddings.bin",
                "tables/users.bin", "tables/posts.bin", "tables/comments.bin", "tables/votes.bin",
                "tasks/predict_num_comments_30d.bin", "tasks/predict_has_accepted_answer.bin",
                "tasks/predict_vote_type.bin");
    }

    private SamplerDatabaseException openFails(Path db) {
        return assertThrows(SamplerDatabaseException.class, () -> Database.open(db).close());
    }

    private static void truncate(Path file, long newLength) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(newLength);
        }
    }

    private static void putU32(Path file, long offset, int value) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            f.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array());
        }
    }

    private static int getU32(Path file, long offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            byte[] b = new byte[4];
            f.seek(offset);
            f.readFully(b);
            return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getInt();
        }
    }

    @ParameterizedTest
    @MethodSource("binaryFiles")
    void truncatedByOneByte(String name) throws IOException {
        Path db = Fixtures.copyDb(tmp);
        Path file = db.resolve(name);
        truncate(file, Files.size(file) - 1);
        SamplerDatabaseException e = openFails(db);
        assertEquals(file, e.file());
        DatabaseRule expected = name.endsWith("embeddings.bin") ? DatabaseRule.EMBEDDING_SIZE : DatabaseRule.FILE_SIZE;
        assertEquals(expected, e.rule(), e.getMessage());
        assertTrue(e.getMessage().contains(name.substring(name.indexOf('/') + 1)), e.getMessage());
    }

    @ParameterizedTest
    @MethodSource("binaryFiles")
    void truncatedToThreeBytes(String name) throws IOException {
        Path db = Fixtures.copyDb(tmp);
        Path file = db.resolve(name);
        truncate(file, 3);
        SamplerDatabaseException e = openFails(db);
        assertEquals(file, e.file());
        DatabaseRule expected = name.endsWith("embeddings.bin") ? DatabaseRule.EMBEDDING_SIZE
                : DatabaseRule.FILE_TOO_SHORT;
        assertEquals(expected, e.rule(), e.getMessage());
    }

    @ParameterizedTest
    @MethodSource("binaryFiles")
    void missing(String name) throws IOException {
        Path db = Fixtures.copyDb(tmp);
        Files.delete(db.resolve(name));
        SamplerDatabaseException e = openFails(db);
        assertEquals(DatabaseRule.FILE_MISSING, e.rule());
        assertEquals(db.resolve(name), e.file());
    }

    @Test
    void emptyCategoricalAndTextFilesAreValidEmptyTablesButThenIndicesAreOutOfRange() throws IOException {
        Path db = Fixtures.copyDb(tmp);
        truncate(db.resolve("text_embeddings.bin"), 0);
        SamplerDatabaseException e = openFails(db);
        assertEquals(DatabaseRule.INDEX_RANGE, e.rule(), e.getMessage());
    }

    @Test
    void missingOrBrokenMetadata() throws IOException {
        Path db = Fixtures.copyDb(tmp);
        Path meta = db.resolve("metadata.json");
        String json = Files.readString(meta);
        Files.delete(meta);
        assertEquals(DatabaseRule.FILE_MISSING, openFails(db).rule());
        Files.writeString(meta, json.substring(0, json.length() / 2));
        assertEquals(DatabaseRule.METADATA_JSON, openFails(db).rule());
        Files.writeString(meta, json.replace("\"stype\": \"Numerical\"", "\"stype\": \"Numeric\""));
        assertEquals(DatabaseRule.METADATA_SCHEMA, openFails(db).rule());
        Files.writeString(meta, json.replace("\"row_range\": [\n        100,", "\"row_range\": [\n        101,"));
        assertEquals(DatabaseRule.METADATA_CONSISTENCY, openFails(db).rule());
        Files.writeString(meta, json.replace("\"temporal_col\": 12", "\"temporal_col\": 0"));
        assertEquals(DatabaseRule.TEMPORAL_COLUMN, openFails(db).rule());
        Files.writeString(meta, json.replace("\"target_stype\": \"Boolean\"", "\"target_stype\": \"Text\""));
        assertEquals(DatabaseRule.TARGET_STYPE, openFails(db).rule());
        Files.writeString(meta, json.replace("\"num_seeds\": ", "\"num_seeds\": 1"));
        assertEquals(DatabaseRule.SEED_COUNT, openFails(db).rule());
        Files.writeString(meta, "[]", StandardCharsets.UTF_8);
        assertEquals(DatabaseRule.METADATA_SCHEMA, openFails(db).rule());
    }

    @Test
    void graphHeaderNodeCountPointersAndIndices() throws IOException {
        Path db = Fixtures.copyDb(tmp);
        Path g = db.resolve("graph.bin");
        byte[] original = Files.readAllBytes(g);
        int n = getU32(g, 0);
        int e = getU32(g, 4);

        putU32(g, 12, e + 1);
        assertEquals(DatabaseRule.GRAPH_HEADER, openFails(db).rule());

        Files.write(g, original);
        putU32(g, 16 + 4L * n, e - 1); // out_row_ptr[N] != E
        assertEquals(DatabaseRule.ROW_POINTERS, openFails(db).rule());

        Files.write(g, original);
        putU32(g, 16 + 4L * 5, 0x7fffffff); // a pointer that jumps past the next one
        assertEquals(DatabaseRule.ROW_POINTERS, openFails(db).rule());

        Files.write(g, original);
        putU32(g, 16 + 4L * (n + 1), n); // out_col_idx[0] = N
        SamplerDatabaseException ex = openFails(db);
        assertEquals(DatabaseRule.INDEX_RANGE, ex.rule());
        assertTrue(ex.getMessage().contains("out_col_idx[0]"), ex.getMessage());

        Files.write(g, original);
        putU32(g, 16 + 4L * (2L * (n + 1) + 2L * e) - 4, -1); // last in_col_idx = u32 max
        assertEquals(DatabaseRule.INDEX_RANGE, openFails(db).rule());
    }

    @Test
    void tableHeadersAndIndices() throws IOException {
        Path db = Fixtures.copyDb(tmp);
        Path users = db.resolve("tables/users.bin");
        byte[] original = Files.readAllBytes(users);
        putU32(users, 4, 12);
        assertEquals(DatabaseRule.COLUMN_COUNT, openFails(db).rule());
        Files.write(users, original);
        putU32(users, 0, 99);
        assertEquals(DatabaseRule.FILE_SIZE, openFails(db).rule());
    }

    @Test
    void anchorRowOutOfRange() throws IOException {
        Path db = Fixtures.copyDb(tmp);
        Path task = db.resolve("tasks/predict_vote_type.bin");
        putU32(task, 8, 2000);
        SamplerDatabaseException e = openFails(db);
        assertEquals(DatabaseRule.INDEX_RANGE, e.rule());
        assertEquals(task, e.file());
        assertEquals("2000", e.actual());
    }

    @Test
    void extraFilesAreIgnored() throws IOException {
        Path db = Fixtures.copyDb(tmp);
        Files.writeString(db.resolve("notes.txt"), "hello");
        Files.writeString(db.resolve("tables/other.bin"), "x");
        try (Database d = Database.open(db)) {
            assertEquals(4, d.numTables());
        }
    }
}
