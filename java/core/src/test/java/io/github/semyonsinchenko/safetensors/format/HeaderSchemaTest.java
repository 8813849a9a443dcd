package io.github.semyonsinchenko.safetensors.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Headers our writer produces validate against {@code format/safetensors.schema.json} and, where
 * it is present beside the repository, against the reference's official schema, whose dtype
 * pattern rejects exactly the dtypes listed in {@link #OFFICIAL_SCHEMA_REJECTS}.
 */
class HeaderSchemaTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SchemaRegistry REGISTRY = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

    /**
     * The official dtype pattern {@code ([UIF])(8|16|32|64|128|256)} is unanchored, so it accepts any
     * string containing e.g. "F16" or "F8": BF16 and the five F8_* dtypes pass by accident. These are
     * the dtypes it rejects although the reference reads and writes them.
     */
    static final Set<Dtype> OFFICIAL_SCHEMA_REJECTS =
            EnumSet.of(Dtype.BOOL, Dtype.F4, Dtype.F6_E2M3, Dtype.F6_E3M2, Dtype.C64);

    private static final long SEED = 0x5AFE_7E45L;
    private static final int HEADERS = 200;

    static Path repoRoot() {
        return Path.of(System.getProperty("safetensors.repo.root", "../..")).toAbsolutePath().normalize();
    }

    static Schema schema(Path file) throws IOException {
        return REGISTRY.getSchema(Files.readString(file, StandardCharsets.UTF_8), InputFormat.JSON);
    }

    static Schema ourSchema() throws IOException {
        return schema(repoRoot().resolve("format/safetensors.schema.json"));
    }

    /** The official schema from the shared reference copy next to the repository, or a skip. */
    static Schema officialSchema() throws IOException {
        Path official = repoRoot().getParent().resolve("shared/format/safetensors.schema.json");
        Assumptions.assumeTrue(Files.isRegularFile(official),
                "SKIPPED: the official safetensors schema is not at " + official
                        + " (../shared/format/ beside the repository); the official-schema checks did not run");
        return schema(official);
    }

    // ---------------------------------------------------------------- headers the writer produces

    /** A tensor name: ASCII, Latin-1, CJK or supplementary characters; unique within a header by index. */
    private static String name(Random rnd, int index) {
        String[] stems = {"w", "layer.0.weight", "caf\u00e9", "\u5f20\u91cf", "\uD83D\uDE00", "a/b c", "x\ny"};
        return stems[rnd.nextInt(stems.length)] + "_" + index;
    }

    /** A shape whose element count fills whole bytes for {@code d}: scalars, zero dims and up to rank 4. */
    private static long[] shape(Random rnd, Dtype d) {
        int rank = rnd.nextInt(5);
        long[] shape = new long[rank];
        for (int i = 0; i < rank; i++) {
            shape[i] = rnd.nextInt(8) == 0 ? 0 : 1 + rnd.nextInt(5);
        }
        if (!d.isByteAligned()) {
            long count = Arrays.stream(shape).reduce(1, (a, b) -> a * b);
            if (count * d.bits() % 8 != 0) {
                shape = Arrays.copyOf(shape, rank + 1);
                shape[rank] = 4; // 4 x 4 or 4 x 6 bits: whole bytes
            }
        }
        return shape;
    }

    /** Header JSON text (the N bytes after the prefix) for a random set of tensors and metadata. */
    static String randomHeader(Random rnd, List<Dtype> dtypes) throws SafetensorsException {
        SafetensorsWriter w = new SafetensorsWriter();
        int meta = rnd.nextInt(3);
        for (int i = 0; i < meta; i++) {
            w.metadata("key" + i + (rnd.nextBoolean() ? "\u00fc" : ""), rnd.nextBoolean() ? "" : "value \"" + i + "\"\n");
        }
        for (int i = 0; i < dtypes.size(); i++) {
            Dtype d = dtypes.get(i);
            w.add(name(rnd, i), d, shape(rnd, d), (SafetensorsWriter.ByteSource) out -> {});
        }
        return headerJson(w.header());
    }

    static String headerJson(Header h) {
        byte[] all = h.toBytes();
        return new String(all, Header.PREFIX_BYTES, all.length - Header.PREFIX_BYTES, StandardCharsets.UTF_8);
    }

    /** 200 headers; the first holds every dtype, the rest a random selection (possibly none). */
    static List<String> writerHeaders() throws SafetensorsException {
        Random rnd = new Random(SEED);
        List<String> headers = new ArrayList<>();
        headers.add(randomHeader(rnd, List.of(Dtype.values())));
        for (int i = 1; i < HEADERS; i++) {
            List<Dtype> dtypes = new ArrayList<>();
            int n = rnd.nextInt(6);
            for (int j = 0; j < n; j++) {
                dtypes.add(Dtype.values()[rnd.nextInt(Dtype.values().length)]);
            }
            headers.add(randomHeader(rnd, dtypes));
        }
        return headers;
    }

    private static Set<Dtype> dtypesIn(String header) throws IOException {
        Set<Dtype> out = EnumSet.noneOf(Dtype.class);
        JsonNode root = JSON.readTree(header);
        root.properties().forEach(e -> {
            if (!e.getKey().equals(Header.METADATA_KEY)) {
                out.add(Dtype.valueOf(e.getValue().get("dtype").asText()));
            }
        });
        return out;
    }

    @Test
    void writerHeadersCoverEveryDtypeScalarsEmptyTensorsAndMetadata() throws IOException {
        Set<Dtype> seen = EnumSet.noneOf(Dtype.class);
        boolean scalar = false;
        boolean empty = false;
        boolean metadata = false;
        for (String h : writerHeaders()) {
            seen.addAll(dtypesIn(h));
            JsonNode root = JSON.readTree(h);
            metadata |= root.has(Header.METADATA_KEY);
            for (var e : root.properties()) {
                JsonNode shape = e.getValue().get("shape");
                if (shape != null) {
                    scalar |= shape.isEmpty();
                    for (JsonNode d : shape) {
                        empty |= d.asLong() == 0;
                    }
                }
            }
        }
        assertEquals(EnumSet.allOf(Dtype.class), seen);
        assertTrue(scalar && empty && metadata, "scalar " + scalar + ", empty " + empty + ", metadata " + metadata);
    }

    @Test
    void everyWriterHeaderValidatesAgainstOurSchema() throws IOException {
        Schema schema = ourSchema();
        for (String h : writerHeaders()) {
            List<Error> errors = schema.validate(h, InputFormat.JSON);
            assertTrue(errors.isEmpty(), () -> errors + " for " + h);
        }
    }

    @Test
    void officialSchemaRejectsExactlyTheDocumentedDtypes() throws IOException {
        Schema official = officialSchema();
        Set<Dtype> rejected = EnumSet.noneOf(Dtype.class);
        for (Dtype d : Dtype.values()) {
            String h = randomHeader(new Random(d.ordinal()), List.of(d));
            List<Error> errors = official.validate(h, InputFormat.JSON);
            if (!errors.isEmpty()) {
                rejected.add(d);
                for (Error e : errors) {
                    assertEquals("pattern", e.getKeyword(), e::toString);
                    assertTrue(e.getInstanceLocation().toString().endsWith("/dtype"), e::toString);
                }
            }
        }
        assertEquals(OFFICIAL_SCHEMA_REJECTS, rejected);
    }

    @Test
    void everyWriterHeaderValidatesAgainstTheOfficialSchemaSaveThoseDtypes() throws IOException {
        Schema official = officialSchema();
        int checked = 0;
        for (String h : writerHeaders()) {
            List<Error> errors = official.validate(h, InputFormat.JSON);
            Set<Dtype> bad = dtypesIn(h).stream().filter(OFFICIAL_SCHEMA_REJECTS::contains)
                    .collect(Collectors.toCollection(() -> EnumSet.noneOf(Dtype.class)));
            if (bad.isEmpty()) {
                assertTrue(errors.isEmpty(), () -> errors + " for " + h);
                checked++;
            } else {
                assertFalse(errors.isEmpty(), h);
                for (Error e : errors) {
                    assertEquals("pattern", e.getKeyword(), e::toString);
                    assertTrue(bad.contains(Dtype.valueOf(e.getInstanceNode().asText())), e::toString);
                }
            }
        }
        assertTrue(checked > HEADERS / 4, "only " + checked + " headers avoided the rejected dtypes");
    }

    // ---------------------------------------------------------------- what our schema rejects

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"w\":{\"dtype\":\"F128\",\"shape\":[1],\"data_offsets\":[0,16]}}",
        "{\"w\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
        "{\"w\":{\"dtype\":\"XBF16\",\"shape\":[1],\"data_offsets\":[0,2]}}",
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"extra\":1}}",
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,0]}}",
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[281474976710656],\"data_offsets\":[0,0]}}",
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,4]}}",
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4]}}",
        "{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}",
        "{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}",
        "{\"w\":[1]}",
        "{\"__metadata__\":{\"k\":1}}",
        "{\"__metadata__\":{\"k\":{\"a\":\"b\"}}}",
        "{\"__metadata__\":null}",
        "{\"__metadata__\":\"pt\"}",
        "[]"
    })
    void ourSchemaRejects(String header) throws IOException {
        assertFalse(ourSchema().validate(header, InputFormat.JSON).isEmpty(), header);
    }

    @Test
    void ourSchemaListsExactlyTheDtypeEnum() throws IOException {
        JsonNode schema = JSON.readTree(repoRoot().resolve("format/safetensors.schema.json").toFile());
        List<String> listed = new ArrayList<>();
        schema.at("/$defs/dtype/enum").forEach(n -> listed.add(n.asText()));
        assertEquals(Arrays.stream(Dtype.values()).map(Dtype::name).toList(), listed);
    }
}
