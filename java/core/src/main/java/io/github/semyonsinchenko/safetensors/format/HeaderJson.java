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

/**
 * Compact header JSON in the reference writer's shape: __metadata__ first, then tensors in offset
 * order, strings escaped as serde_json escapes them: non-ASCII as raw UTF-8 (characters above U+FFFF
 * too, not as surrogate escapes), control characters without a short escape as six-character escapes
 * with lowercase hex digits. Callers reject unpaired surrogates first (see {@link Header#layout}):
 * they have no UTF-8 form.
 */
final class HeaderJson {
    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
            .disable(JsonWriteFeature.WRITE_HEX_UPPER_CASE)
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
