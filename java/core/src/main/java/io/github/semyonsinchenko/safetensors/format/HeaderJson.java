package io.github.semyonsinchenko.safetensors.format;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/** Compact header JSON in the reference writer's shape: __metadata__ first, then tensors in offset order. */
final class HeaderJson {
    // The reference writer's (serde_json's) bytes exactly: control characters escaped as lowercase
    // \u001f, and characters above U+FFFF as their 4 UTF-8 bytes, not as an escaped surrogate pair.
    private static final JsonFactory JSON = JsonFactory.builder()
            .disable(JsonWriteFeature.WRITE_HEX_UPPER_CASE)
            .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
            .build();

    private HeaderJson() {}

    static byte[] write(Map<String, String> metadata, List<TensorInfo> tensors) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 + 96 * tensors.size());
        try (JsonGenerator g = JSON.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            if (!metadata.isEmpty()) {
                g.writeObjectFieldStart(Header.METADATA_KEY);
                for (Map.Entry<String, String> e : metadata.entrySet()) {
                    g.writeStringField(e.getKey(), e.getValue());
                }
                g.writeEndObject();
            }
            for (TensorInfo t : tensors) {
                g.writeObjectFieldStart(t.name());
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
                g.writeEndObject();
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing to memory cannot fail", e);
        }
        return out.toByteArray();
    }
}
