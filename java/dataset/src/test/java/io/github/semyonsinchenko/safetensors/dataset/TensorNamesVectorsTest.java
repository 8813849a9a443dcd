package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link TensorNames} against {@code format/vectors/dataset/kv_names.json} and {@code batch_names.json}. */
class TensorNamesVectorsTest {
    static Stream<JsonNode> kvCases() {
        return Vectors.cases("kv_names.json", "cases").stream();
    }

    @ParameterizedTest
    @MethodSource("kvCases")
    void kvNamesParseAndAreWrittenAsTheVectorsSay(JsonNode c) {
        List<String> columns = Vectors.strings(c.get("columns"));
        String separator = Vectors.text(c, "separator");
        String name = c.get("name").asText();
        TensorNames.Kv parsed = TensorNames.parseKv(name, columns, separator);
        String key = Vectors.text(c, "key");
        if (key == null) {
            assertNull(parsed, c.toString());
            return;
        }
        assertEquals(new TensorNames.Kv(key, c.get("column").asText()), parsed, c.toString());
        if (separator != null) {
            assertEquals(name, TensorNames.kv(key, c.get("column").asText(), separator), c.toString());
        }
    }

    static Stream<JsonNode> kvAmbiguity() {
        return Vectors.cases("kv_names.json", "ambiguity").stream();
    }

    @ParameterizedTest
    @MethodSource("kvAmbiguity")
    void ambiguousKvColumnSetsAreRefused(JsonNode c) {
        String problem = TensorNames.kvAmbiguity(Vectors.strings(c.get("columns")), c.get("separator").asText());
        assertEquals(c.get("ambiguous").asBoolean(), problem != null, c + ": " + problem);
    }

    static Stream<JsonNode> batchCases() {
        return Vectors.cases("batch_names.json", "cases").stream();
    }

    @ParameterizedTest
    @MethodSource("batchCases")
    void batchNamesParseAsTheVectorsSay(JsonNode c) {
        TensorNames.Batch parsed = TensorNames.parseBatch(c.get("name").asText(), Vectors.strings(c.get("columns")));
        String column = Vectors.text(c, "column");
        if (column == null) {
            assertNull(parsed, c.toString());
        } else {
            assertEquals(new TensorNames.Batch(column, c.get("batch").asLong()), parsed, c.toString());
        }
    }

    static Stream<JsonNode> packed() {
        return Vectors.cases("batch_names.json", "packed").stream();
    }

    @ParameterizedTest
    @MethodSource("packed")
    void packedBatchesAreNamedAsTheVectorsSay(JsonNode c) {
        assertEquals(c.get("name").asText(), TensorNames.packedBatch(c.get("column").asText(), c.get("batch").asInt()));
    }

    static Stream<JsonNode> packedAmbiguity() {
        return Vectors.cases("batch_names.json", "packed_ambiguity").stream();
    }

    @ParameterizedTest
    @MethodSource("packedAmbiguity")
    void ambiguousPackedColumnSetsAreRefused(JsonNode c) {
        String problem = TensorNames.packedAmbiguity(Vectors.strings(c.get("columns")));
        assertEquals(c.get("ambiguous").asBoolean(), problem != null, c + ": " + problem);
    }
}
