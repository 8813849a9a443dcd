package io.github.semyonsinchenko.safetensors.preprocess.input;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.util.List;
import org.junit.jupiter.api.Test;

class InputSchemaTest {

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
}
