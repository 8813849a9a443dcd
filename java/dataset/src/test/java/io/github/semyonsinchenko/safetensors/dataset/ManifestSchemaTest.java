package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.github.semyonsinchenko.safetensors.format.Dtype;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code format/dataset_manifest.schema.json}: the shared manifests of {@code format/vectors/dataset/manifests}
 * get the verdict their {@code expected.tsv} gives, and what {@link Manifest} writes validates. (The
 * Spark connector's tests validate the manifests of real Spark writes the same way.)
 */
class ManifestSchemaTest {
    private static final SchemaRegistry REGISTRY =
            SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

    static Schema schema() throws IOException {
        return REGISTRY.getSchema(Files.readString(Vectors.repoRoot().resolve("format/dataset_manifest.schema.json"),
                StandardCharsets.UTF_8), InputFormat.JSON);
    }

    static Stream<Arguments> expected() throws IOException {
        List<Arguments> out = new ArrayList<>();
        for (String line : Files.readAllLines(Vectors.dir().resolve("manifests/expected.tsv"))) {
            if (!line.isBlank() && !line.startsWith("#")) {
                String[] f = line.split("\t");
                out.add(Arguments.of(f[0], f[1]));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("expected")
    void sharedManifestsGetTheSchemaVerdictTheyList(String file, String verdict) throws IOException {
        String m = Files.readString(Vectors.dir().resolve("manifests").resolve(file));
        List<Error> errors = schema().validate(m, InputFormat.JSON);
        assertEquals(verdict.equals("valid"), errors.isEmpty(), () -> file + ": " + errors);
    }

    @Test
    void everySharedManifestIsListed() throws IOException {
        List<String> listed = expected().map(a -> (String) a.get()[0]).sorted().toList();
        try (Stream<Path> files = Files.list(Vectors.dir().resolve("manifests"))) {
            assertEquals(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".json")).sorted()
                    .toList(), listed);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"ours_kv.json", "ours_batch_packed.json", "empty.json", "original_connector.json",
        "earlier_version.json"})
    void schemaValidManifestsParseCompletely(String file) throws IOException {
        Path p = Vectors.dir().resolve("manifests").resolve(file);
        Manifest m = Manifest.parseComplete(Files.readAllBytes(p), p.toString());
        JsonNode raw = Vectors.JSON.readTree(p.toFile());
        assertEquals(raw.get("total_samples").asLong(), m.totalSamples(), file);
        assertEquals(raw.get("shards").size(), m.shards().size(), file);
    }

    /** What the writer produces for each mode validates (the same Manifest.toJson the commit writes). */
    @Test
    void manifestsThisModuleWritesValidate() throws IOException {
        Map<String, ColumnSchema> schema = new LinkedHashMap<>();
        schema.put("emb", new ColumnSchema("BF16", null));
        schema.put("label", new ColumnSchema("I64", new long[0]));
        List<Shard> shards = List.of(new Shard(DatasetLayout.shardName(0, 0, UUID.randomUUID()), 3, 120),
                new Shard(DatasetLayout.shardName(1, 0, UUID.randomUUID()), 0, 8));
        List<Manifest> written = List.of(
                Manifest.of(Layout.kv("id", "__"), schema, shards, new Manifest.IndexRef(
                        DatasetLayout.indexVersionFile(4, UUID.randomUUID()), "c-1", "ab".repeat(32), 7), 4, "c-1"),
                Manifest.of(Layout.batch(4, "pad", true), Map.of("x", new ColumnSchema("F16", new long[] {8})),
                        shards, null, 1, "c-2"),
                Manifest.of(Layout.kv("id", "__"), Map.of(), List.of(), null, 1, "c-3"));
        for (Manifest m : written) {
            String json = new String(m.toBytes(), StandardCharsets.UTF_8);
            List<Error> errors = schema().validate(json, InputFormat.JSON);
            assertTrue(errors.isEmpty(), () -> errors + " for " + json);
        }
    }

    private static final String MANIFEST = """
            {"format_version": "1", "safetensors_version": "0.8", "total_samples": 3, "total_bytes": 96,
             "shards": [{"file": "part-00000-0f8fad5b-d9cb-469f-a165-70867728950e.safetensors",
                         "samples_count": 3, "bytes": 96}],
             "write_mode": "batch",
             "schema": {"image": {"dtype": "F32", "shape": [2, 2]}, "label": {"dtype": "I64", "shape": [],
                        "optional": true}}
             %s}
            """;

    @ParameterizedTest
    @ValueSource(strings = {
        "\"file\": |\"name\": ",
        "\"file\": \"part-00000-0f8fad5b-d9cb-469f-a165-70867728950e.safetensors\",|\"file\": \"part-00000-0f8fad5b-d9cb-469f-a165-70867728950e.safetensors\", \"shard_path\": \"part-00000-0f8fad5b-d9cb-469f-a165-70867728950e.safetensors\",",
        "%s|, \"batch_size\": 0",
        "%s|, \"tail_strategy\": \"cut\"",
        "%s|, \"kv_separator\": 1",
        "\"dtype\": \"F32\", |",
        "part-00000-0f8fad5b-d9cb-469f-a165-70867728950e.safetensors|part-0000-0f8fad5b-d9cb-469f-a165-70867728950e.safetensors",
        "part-00000-0f8fad5b-d9cb-469f-a165-70867728950e.safetensors|part-00000-0F8FAD5B-D9CB-469F-A165-70867728950E.safetensors",
        "part-00000-0f8fad5b-d9cb-469f-a165-70867728950e.safetensors|dir/part-00000-0f8fad5b-d9cb-469f-a165-70867728950e.safetensors",
        "\"batch\"|\"rows\"",
        "\"total_samples\": 3|\"total_samples\": -1",
        "\"total_bytes\": 96|\"total_bytes\": 9.5",
        "\"samples_count\": 3, |",
        "\"dtype\": \"F32\"|\"dtype\": \"FLOAT\"",
        "\"shape\": [2, 2]|\"shape\": \"2x2\"",
        "\"optional\": true|\"optional\": \"yes\"",
        "\"format_version\": \"1\"|\"format_version\": 1",
        "%s|, \"unknown\": 1",
        "%s|, \"index\": {\"keys\": 3}"
    })
    void theSchemaRejectsEachBrokenField(String edit) throws IOException {
        String base = MANIFEST.replace("%s", "");
        assertTrue(schema().validate(base, InputFormat.JSON).isEmpty(), base);
        String[] fromTo = edit.split("\\|", -1);
        String m = MANIFEST.replace(fromTo[0], fromTo[1]).replace("%s", "");
        assertFalse(m.equals(base), "edit did not apply: " + edit);
        assertFalse(schema().validate(m, InputFormat.JSON).isEmpty(), m);
    }

    @Test
    void manifestDtypesAreTheHeaderDtypes() throws IOException {
        JsonNode schema = Vectors.JSON.readTree(Vectors.repoRoot().resolve("format/dataset_manifest.schema.json")
                .toFile());
        List<String> listed = new ArrayList<>();
        schema.at("/$defs/column/properties/dtype/enum").forEach(n -> listed.add(n.asText()));
        assertEquals(Arrays.stream(Dtype.values()).map(Dtype::name).toList(), listed);
    }
}
