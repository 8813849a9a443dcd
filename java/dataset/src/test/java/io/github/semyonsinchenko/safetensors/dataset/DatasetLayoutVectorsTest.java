package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import java.io.IOException;
import java.util.Locale;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link DatasetLayout}'s shard names against {@code format/vectors/dataset/shard_names.json}. */
class DatasetLayoutVectorsTest {
    static Stream<JsonNode> written() {
        return Vectors.cases("shard_names.json", "written").stream();
    }

    @ParameterizedTest
    @MethodSource("written")
    void shardsAreNamedAsTheVectorsSayUnderAnyLocale(JsonNode c) {
        Locale before = Locale.getDefault();
        try {
            for (Locale l : new Locale[] {Locale.ROOT, Locale.forLanguageTag("ar-EG"), Locale.forLanguageTag("hi-IN")}) {
                Locale.setDefault(l);
                assertEquals(c.get("name").asText(), DatasetLayout.shardName(c.get("partition").asInt(),
                        c.get("shard").asInt(), UUID.fromString(c.get("uuid").asText())), l.toString());
            }
        } finally {
            Locale.setDefault(before);
        }
    }

    static Stream<JsonNode> names() {
        return Vectors.cases("shard_names.json", "names").stream();
    }

    @ParameterizedTest
    @MethodSource("names")
    void shardNamesAreRecognisedAsTheVectorsSay(JsonNode c) throws IOException {
        String name = c.get("name").asText();
        assertEquals(c.get("writer_pattern").asBoolean(), DatasetLayout.isShardName(name), name);
        Schema schema = ManifestSchemaTest.schema();
        String manifest = "{\"format_version\": \"1.0\", \"safetensors_version\": \"1.0\", \"total_samples\": 1,"
                + " \"total_bytes\": 1, \"shards\": [{\"shard_path\": " + Vectors.JSON.writeValueAsString(name)
                + ", \"samples_count\": 1, \"bytes\": 1}]}";
        assertEquals(c.get("manifest_schema").asBoolean(), schema.validate(manifest, InputFormat.JSON).isEmpty(), name);
    }

    @Test
    void everyWrittenNameIsOneTheWriterPatternAndTheSchemaAccept() throws IOException {
        for (JsonNode c : Vectors.cases("shard_names.json", "written")) {
            assertTrue(DatasetLayout.isShardName(c.get("name").asText()), c.toString());
        }
        String fresh = DatasetLayout.shardName(7, 3, UUID.randomUUID());
        assertTrue(DatasetLayout.isShardName(fresh), fresh);
    }
}
