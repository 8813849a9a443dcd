package io.github.semyonsinchenko.safetensors.cli;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import io.github.semyonsinchenko.safetensors.format.JsonErrors;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The little JSON the commands need, on jackson-core's streaming API (core already depends on it). */
final class Json {
    private static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private Json() {}

    /** A pretty-printing generator on {@code out}; the caller closes it (which does not close {@code out}). */
    static JsonGenerator writer(Writer out) throws IOException {
        JsonGenerator g = FACTORY.createGenerator(out);
        g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        g.setPrettyPrinter(new DefaultPrettyPrinter());
        return g;
    }

    static JsonGenerator writer(OutputStream out) throws IOException {
        JsonGenerator g = FACTORY.createGenerator(out, JsonEncoding.UTF8);
        g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        g.setPrettyPrinter(new DefaultPrettyPrinter());
        return g;
    }

    /** {@code "name": {"k": "v", ...}} in the map's order. */
    static void writeStringMap(JsonGenerator g, String name, Map<String, String> map) throws IOException {
        g.writeObjectFieldStart(name);
        for (Map.Entry<String, String> e : map.entrySet()) {
            g.writeStringField(e.getKey(), e.getValue());
        }
        g.writeEndObject();
    }

    /** The fields every tensor listing shares: name, dtype, shape and data_offsets. */
    static void writeTensorFields(JsonGenerator g, TensorInfo t) throws IOException {
        g.writeStringField("name", t.name());
        g.writeStringField("dtype", t.dtype().name());
        g.writeArrayFieldStart("shape");
        for (int i = 0; i < t.rank(); i++) {
            g.writeNumber(t.dim(i));
        }
        g.writeEndArray();
        g.writeArrayFieldStart("data_offsets");
        g.writeNumber(t.begin());
        g.writeNumber(t.end());
        g.writeEndArray();
    }

    /**
     * Reads a JSON document into {@link LinkedHashMap} (key order kept), {@link ArrayList},
     * String, Long (integers; larger ones are rejected), Double, Boolean and null. Duplicate keys
     * are an error.
     */
    static Object read(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return read(in, file.toString());
        }
    }

    /** As {@link #read(Path)}, from a stream; {@code source} names it in errors. */
    static Object read(InputStream in, String source) throws IOException {
        try (JsonParser p = FACTORY.createParser(in)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                throw new IOException(source + ": empty JSON document");
            }
            Object value = readValue(p, source);
            if (p.nextToken() != null) {
                throw new IOException(source + ": content after the JSON document at line "
                        + p.currentLocation().getLineNr());
            }
            return value;
        } catch (JsonProcessingException e) {
            throw new IOException(source + ": " + JsonErrors.describe(e), e);
        }
    }

    private static Object readValue(JsonParser p, String file) throws IOException {
        return switch (p.currentToken()) {
            case START_OBJECT -> {
                Map<String, Object> map = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String key = p.currentName();
                    p.nextToken();
                    map.put(key, readValue(p, file));
                }
                yield map;
            }
            case START_ARRAY -> {
                List<Object> list = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    list.add(readValue(p, file));
                }
                yield list;
            }
            case VALUE_STRING -> p.getText();
            case VALUE_NUMBER_INT -> {
                if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                    throw new IOException(file + ": integer " + p.getText() + " at line "
                            + p.currentLocation().getLineNr() + " does not fit in 64 bits");
                }
                yield p.getLongValue();
            }
            case VALUE_NUMBER_FLOAT -> p.getDoubleValue();
            case VALUE_TRUE -> Boolean.TRUE;
            case VALUE_FALSE -> Boolean.FALSE;
            case VALUE_NULL -> null;
            default -> throw new IOException(file + ": unexpected " + p.currentToken());
        };
    }
}
