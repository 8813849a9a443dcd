package io.github.semyonsinchenko.safetensors.preprocess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class Utf8AndSchemaTest {

    @Test
    void truncationCutsOnACharacterBoundary() {
        String ascii = "a".repeat(2047);
        assertEquals(ascii + "b", Utf8.truncate(ascii + "bc", 2048));
        String twoByte = "a".repeat(2047) + "é"; // é is 2 bytes and would straddle byte 2048
        assertEquals("a".repeat(2047), Utf8.truncate(twoByte + "x", 2048));
        String emoji = "a".repeat(2045) + "😀"; // 4 bytes at 2045..2048: exactly over by one
        assertEquals("a".repeat(2045), Utf8.truncate(emoji, 2048));
        assertEquals("a".repeat(2044) + "😀", Utf8.truncate("a".repeat(2044) + "😀z", 2048));
        assertEquals("short", Utf8.truncate("short", 2048));
        assertTrue(Utf8.truncate("é".repeat(5000), 2048).getBytes(StandardCharsets.UTF_8).length == 2048);
    }

    @Test
    void byteOrderDiffersFromUtf16Order() {
        List<String> values = new ArrayList<>(List.of("😀", "\uFFFF", "Z", "é", "a"));
        values.sort(Utf8.BYTE_ORDER);
        assertEquals(List.of("Z", "a", "é", "\uFFFF", "😀"), values);
        assertTrue("\uFFFF".compareTo("😀") > 0, "Java's own order puts the surrogate pair first");
    }

    @Test
    void schemaKeepsKeyOrderAndParsesStypesLikeHeadwater() throws Exception {
        String json = """
                {"name": "x", "extra": 1,
                 "tables": {"b": {"primary_key": "Id", "columns": {"Id": {"stype": "IDENTIFIER"},
                                                                  "z": {"stype": "weird"},
                                                                  "a": {"stype": "Categorical", "foreign_key": "a.b.c"}}},
                            "a": {"columns": {}}},
                 "tasks": {"t": {"query": "SELECT 1", "anchor_table": "b", "anchor_key": "Id",
                                 "target_column": "a", "target_stype": "numerical"}}}""";
        InputSchema s = InputSchema.parse(new ObjectMapper().readTree(json), "x.json");
        assertEquals(List.of("b", "a"), s.tables().stream().map(InputSchema.Table::name).toList());
        InputSchema.Table b = s.tables().getFirst();
        assertEquals(List.of("Id", "z", "a"), b.columns().stream().map(InputSchema.Column::name).toList());
        assertEquals(SemanticType.IDENTIFIER, b.columns().get(0).stype());
        assertEquals(SemanticType.IGNORED, b.columns().get(1).stype(), "unknown stypes become Ignored");
        assertEquals("a", b.columns().get(2).foreignTable());
        assertEquals("b.c", b.columns().get(2).foreignColumn(), "split at the first dot");
        assertNull(b.temporalColumn());
        assertNull(s.tasks().getFirst().observationTimeColumn());
        PreprocessException e = assertThrows(PreprocessException.class, () -> InputSchema.parse(
                new ObjectMapper().readTree("{\"name\": \"x\", \"tables\": {\"t\": {\"columns\": {\"c\": {}}}}, \"tasks\": {}}"),
                "y.json"));
        assertTrue(e.getMessage().startsWith("y.json: ") && e.getMessage().contains("tables.t.columns.c.stype"),
                e.getMessage());
    }

    @Test
    void queryRewriteQuotesTableNames() {
        assertEquals("SELECT * FROM \"postHistory\" h JOIN \"posts\" p",
                TaskQueries.rewrite("SELECT * FROM 'postHistory.parquet' h JOIN 'posts.parquet' p",
                        List.of("posts", "postHistory")));
    }
}
