package io.github.semyonsinchenko.safetensors.format;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/** Compact header JSON in the reference writer's shape: __metadata__ first, then tensors in offset order. */
final class HeaderJson {
    private static final JsonFactory JSON = new JsonFactory();

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
