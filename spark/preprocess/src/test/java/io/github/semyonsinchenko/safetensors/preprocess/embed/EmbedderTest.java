package io.github.semyonsinchenko.safetensors.preprocess.embed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EmbedderTest {

    private static short[] embed(Embedder e, List<String> texts) {
        short[] out = new short[texts.size() * Embedder.DIM];
        e.embed(texts, out, 0);
        return out;
    }

    private static float[] floats(short[] f16, int row) {
        float[] v = new float[Embedder.DIM];
        for (int i = 0; i < v.length; i++) {
            v[i] = Float.float16ToFloat(f16[row * Embedder.DIM + i]);
        }
        return v;
    }

    private static double dot(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += (double) a[i] * b[i];
        }
        return s;
    }

    @Test
    void normalizationIsF32L2ThenRoundToNearestEvenF16() {
        float[] raw = new float[Embedder.DIM];
        raw[0] = 3f;
        raw[1] = 4f;
        raw[2] = 1e-3f;
        short[] out = new short[Embedder.DIM];
        Embedder.normalizeToF16(raw, 0, out, 0);
        float norm = (float) Math.sqrt(3f * 3f + 4f * 4f + 1e-3f * 1e-3f);
        assertEquals(Float.floatToFloat16(3f * (1f / norm)), out[0]);
        assertEquals(Float.floatToFloat16(4f * (1f / norm)), out[1]);
        assertEquals(Float.floatToFloat16(1e-3f * (1f / norm)), out[2]);
        short[] zeros = new short[Embedder.DIM];
        Embedder.normalizeToF16(new float[Embedder.DIM], 0, zeros, 0);
        assertArrayEquals(new short[Embedder.DIM], zeros, "a zero vector stays zero");
    }

    @Test
    void httpEmbedderBatchesRequestsAndMatchesTheStubRule() throws IOException {
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            texts.add("string " + i + (i % 7 == 0 ? " é 😀" : ""));
        }
        try (StubEmbeddingServer stub = new StubEmbeddingServer(0);
                Embedder e = EmbedderSpec.http(stub.uri(), null).withBatchSize(128).create()) {
            short[] out = embed(e, texts);
            assertEquals(3, stub.requests(), "300 strings in batches of 128");
            for (int i = 0; i < texts.size(); i++) {
                short[] want = new short[Embedder.DIM];
                Embedder.normalizeToF16(StubEmbeddingServer.vector(texts.get(i)), 0, want, 0);
                short[] got = new short[Embedder.DIM];
                System.arraycopy(out, i * Embedder.DIM, got, 0, Embedder.DIM);
                assertArrayEquals(want, got, texts.get(i));
            }
        }
    }

    @Test
    void httpEmbedderRetriesFailedRequestsThenGivesUpWithAClearError() throws IOException {
        try (StubEmbeddingServer stub = new StubEmbeddingServer(2);
                Embedder e = EmbedderSpec.http(stub.uri(), "k").withRetries(3, Duration.ofMillis(5),
                        Duration.ofMillis(20)).create()) {
            short[] out = embed(e, List.of("a", "b"));
            assertEquals(3, stub.requests(), "two 503s, then success");
            assertTrue(dot(floats(out, 0), floats(out, 0)) > 0.99);
        }
        try (StubEmbeddingServer stub = new StubEmbeddingServer(10);
                Embedder e = EmbedderSpec.http(stub.uri(), "k").withRetries(3, Duration.ofMillis(5),
                        Duration.ofMillis(20)).create()) {
            PreprocessException x = assertThrows(PreprocessException.class, () -> embed(e, List.of("a")));
            assertTrue(x.getMessage().startsWith("embedding endpoint " + stub.uri() + " (a batch of 1 string) failed"
                    + " after 3 attempts: status 503"), x.getMessage());
            assertEquals(3, stub.requests());
        }
    }

    @Test
    void hashedEmbedderIsDeterministicUnitNormAndSimilarForSharedWords() {
        Embedder e = EmbedderSpec.hashed().create();
        List<String> texts = List.of("spark parquet reader", "a parquet reader for spark", "banana smoothie recipe", "");
        short[] a = embed(e, texts);
        assertArrayEquals(a, embed(EmbedderSpec.hashed().create(), texts), "deterministic");
        for (int i = 0; i < 3; i++) {
            assertEquals(1.0, dot(floats(a, i), floats(a, i)), 2e-3, "unit norm (to F16 precision)");
        }
        assertArrayEquals(new float[Embedder.DIM], floats(a, 3), "no tokens: zero vector");
        double related = dot(floats(a, 0), floats(a, 1));
        double unrelated = dot(floats(a, 0), floats(a, 2));
        assertTrue(related > 0.5 && related > unrelated + 0.3, related + " vs " + unrelated);
    }

    @Test
    void noneWritesZeros() {
        short[] out = new short[2 * Embedder.DIM];
        java.util.Arrays.fill(out, (short) 7);
        EmbedderSpec.none().create().embed(List.of("x", "y"), out, 0);
        assertArrayEquals(new short[2 * Embedder.DIM], out);
    }
}
