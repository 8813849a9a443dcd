package io.github.semyonsinchenko.safetensors.preprocess.embed;

import java.io.Serializable;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;

/**
 * Which embedder to run and how; serializable so every executor builds its own. {@code none}
 * writes zero vectors (headwater's {@code --skip-embeddings}); {@code http} calls an endpoint with
 * headwater's request shape; {@code hashed} is an offline deterministic embedder.
 */
public record EmbedderSpec(Kind kind, URI url, String apiKey, int batchSize, int maxAttempts, Duration initialBackoff,
        Duration maxBackoff, Duration requestTimeout) implements Serializable {

    /** Which embedder. */
    public enum Kind { NONE, HTTP, HASHED }

    /** headwater's defaults: 128 strings per request, 5 attempts, 200 ms doubling to 10 s, 30 s timeout. */
    public static final int DEFAULT_BATCH_SIZE = 128;

    public EmbedderSpec {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batch size must be at least 1, was " + batchSize);
        }
        if (kind == Kind.HTTP && url == null) {
            throw new IllegalArgumentException("the http embedder needs a URL (BASETEN_EMBEDDER_URL or --embedder-url)");
        }
    }

    /** Zero vectors, headwater's {@code --skip-embeddings}. */
    public static EmbedderSpec none() {
        return new EmbedderSpec(Kind.NONE, null, null, DEFAULT_BATCH_SIZE, 1, Duration.ZERO, Duration.ZERO, Duration.ZERO);
    }

    /** The offline hashed embedder. */
    public static EmbedderSpec hashed() {
        return new EmbedderSpec(Kind.HASHED, null, null, DEFAULT_BATCH_SIZE, 1, Duration.ZERO, Duration.ZERO,
                Duration.ZERO);
    }

    /** An HTTP endpoint at {@code url} with {@code apiKey}. */
    public static EmbedderSpec http(URI url, String apiKey) {
        return new EmbedderSpec(Kind.HTTP, url, apiKey, DEFAULT_BATCH_SIZE, 5, Duration.ofMillis(200),
                Duration.ofSeconds(10), Duration.ofSeconds(30));
    }

    /** This spec with {@code size} strings per request. */
    public EmbedderSpec withBatchSize(int size) {
        return new EmbedderSpec(kind, url, apiKey, size, maxAttempts, initialBackoff, maxBackoff, requestTimeout);
    }

    /** This spec with {@code attempts} attempts per request, the first retry after {@code initialBackoff}. */
    public EmbedderSpec withRetries(int attempts, Duration initial, Duration max) {
        return new EmbedderSpec(kind, url, apiKey, batchSize, attempts, initial, max, requestTimeout);
    }

    /** A new embedder of this spec (each executor creates its own). */
    public Embedder create() {
        return switch (kind) {
            case NONE -> (texts, out, offset) -> java.util.Arrays.fill(out, offset, offset + texts.size() * Embedder.DIM,
                    (short) 0);
            case HASHED -> new HashedEmbedder();
            case HTTP -> new HttpEmbedder(this);
        };
    }

    /** The kind named {@code s} ({@code none}, {@code http} or {@code hashed}). */
    public static Kind parseKind(String s) {
        return Kind.valueOf(s.toUpperCase(Locale.ROOT));
    }

    @Override
    public String toString() {
        // Never print the API key.
        return kind == Kind.HTTP ? "http(" + url + ", batch " + batchSize + ")" : kind.name().toLowerCase(Locale.ROOT);
    }
}
