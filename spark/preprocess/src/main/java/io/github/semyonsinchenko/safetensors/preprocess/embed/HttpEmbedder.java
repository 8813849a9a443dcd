package io.github.semyonsinchenko.safetensors.preprocess.embed;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.github.semyonsinchenko.safetensors.io.RetryFailedException;
import io.github.semyonsinchenko.safetensors.io.RetryPolicy;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * An embedding endpoint with headwater's request and reply: {@code POST {"input": [...]}} with
 * {@code Authorization: Api-Key <key>}, answered by {@code {"data": [{"embedding": [1024 floats]}, ...]}},
 * one item per input. Requests of at most {@code batchSize} strings; failed requests (I/O errors,
 * non-2xx statuses) are retried by core's {@link RetryPolicy} (exponential backoff, ×0.5–1.5
 * jitter); a reply of the wrong shape is an error at once.
 */
final class HttpEmbedder implements Embedder {

    /** Floats per reply vector (the model's width); the first {@value Embedder#DIM} are kept. */
    static final int MODEL_DIM = 1024;

    private static final JsonFactory JSON = new JsonFactory();

    private final EmbedderSpec spec;
    private final HttpClient client;
    private final RetryPolicy retry;

    HttpEmbedder(EmbedderSpec spec) {
        this.spec = spec;
        Duration cap = spec.maxBackoff().compareTo(spec.initialBackoff()) >= 0 ? spec.maxBackoff() : spec.initialBackoff();
        this.retry = new RetryPolicy(spec.maxAttempts(), spec.initialBackoff(), cap, 0.5);
        this.client = HttpClient.newBuilder().connectTimeout(spec.requestTimeout()).build();
    }

    @Override
    public void embed(List<String> texts, short[] out, int offset) {
        for (int from = 0; from < texts.size(); from += spec.batchSize()) {
            List<String> batch = texts.subList(from, Math.min(texts.size(), from + spec.batchSize()));
            float[] raw = requestWithRetries(batch);
            for (int i = 0; i < batch.size(); i++) {
                Embedder.normalizeToF16(raw, i * MODEL_DIM, out, offset + (from + i) * DIM);
            }
        }
    }

    private float[] requestWithRetries(List<String> batch) {
        try {
            return retry.call(String.format(Locale.ROOT, "embedding endpoint %s (a batch of %d string%s)", spec.url(),
                    batch.size(), batch.size() == 1 ? "" : "s"), () -> request(batch), e -> e instanceof RetryableException, () -> {});
        } catch (RetryFailedException e) {
            throw new PreprocessException(e.getMessage(), e);
        }
    }

    private float[] request(List<String> batch) throws RetryableException {
        HttpRequest.Builder b = HttpRequest.newBuilder(spec.url()).timeout(spec.requestTimeout())
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(requestBody(batch)));
        if (spec.apiKey() != null) {
            b.header("Authorization", "Api-Key " + spec.apiKey());
        }
        HttpResponse<byte[]> response;
        try {
            response = client.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new RetryableException(e.toString(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PreprocessException("interrupted while calling the embedding endpoint " + spec.url(), e);
        }
        if (response.statusCode() / 100 != 2) {
            String body = new String(response.body(), java.nio.charset.StandardCharsets.UTF_8);
            throw new RetryableException(String.format(Locale.ROOT, "status %d, body %s", response.statusCode(),
                    body.length() > 200 ? body.substring(0, 200) + "..." : body), null);
        }
        return parseReply(response.body(), batch.size());
    }

    static byte[] requestBody(List<String> batch) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JsonGenerator g = JSON.createGenerator(bytes)) {
            g.writeStartObject();
            g.writeArrayFieldStart("input");
            for (String s : batch) {
                g.writeString(s);
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in-memory: cannot happen
        }
        return bytes.toByteArray();
    }

    /** The {@code n * MODEL_DIM} floats of a reply, streamed (replies run to megabytes). */
    private float[] parseReply(byte[] body, int n) {
        float[] raw = new float[n * MODEL_DIM];
        int items = 0;
        try (JsonParser p = JSON.createParser(body)) {
            expect(p.nextToken() == JsonToken.START_OBJECT, "a JSON object");
            boolean sawData = false;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (!field.equals("data")) {
                    p.skipChildren();
                    continue;
                }
                sawData = true;
                expect(value == JsonToken.START_ARRAY, "\"data\" to be an array");
                while (p.nextToken() == JsonToken.START_OBJECT) {
                    boolean sawEmbedding = false;
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String itemField = p.currentName();
                        JsonToken v = p.nextToken();
                        if (!itemField.equals("embedding")) {
                            p.skipChildren();
                            continue;
                        }
                        sawEmbedding = true;
                        expect(v == JsonToken.START_ARRAY, "data[" + items + "].embedding to be an array");
                        int k = 0;
                        while (p.nextToken() != JsonToken.END_ARRAY) {
                            expect(p.currentToken().isNumeric(), "numbers in data[" + items + "].embedding");
                            if (k < MODEL_DIM && items < n) {
                                raw[items * MODEL_DIM + k] = p.getFloatValue();
                            }
                            k++;
                        }
                        expect(k == MODEL_DIM, String.format(Locale.ROOT,
                                "data[%d].embedding to have %d floats, it has %d", items, MODEL_DIM, k));
                    }
                    expect(sawEmbedding, "data[" + items + "] to have an \"embedding\"");
                    items++;
                }
            }
            expect(sawData, "a \"data\" array");
        } catch (IOException e) {
            throw new PreprocessException("embedding endpoint " + spec.url() + " sent malformed JSON: " + e.getMessage(), e);
        }
        expect(items == n, String.format(Locale.ROOT, "%d embeddings (one per input), got %d", n, items));
        return raw;
    }

    private void expect(boolean ok, String what) {
        if (!ok) {
            throw new PreprocessException("embedding endpoint " + spec.url() + ": expected " + what);
        }
    }

    /** A failed request worth repeating: an I/O error or a status outside 2xx. */
    private static final class RetryableException extends IOException {
        private static final long serialVersionUID = 1L;

        RetryableException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
