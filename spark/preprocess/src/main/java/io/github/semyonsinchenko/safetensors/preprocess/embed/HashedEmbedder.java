package io.github.semyonsinchenko.safetensors.preprocess.embed;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/**
 * An offline, deterministic embedder: lowercased word tokens and their character trigrams are
 * hashed (FNV-1a-64) into {@value Embedder#DIM} signed buckets, then the vector is normalized like
 * any other. Strings that share words or word pieces get a positive cosine, so text similarity
 * means something without a network; it is no language model.
 */
final class HashedEmbedder implements Embedder {

    private static final float TRIGRAM_WEIGHT = 0.5f;

    @Override
    public void embed(List<String> texts, short[] out, int offset) {
        float[] v = new float[DIM];
        for (int i = 0; i < texts.size(); i++) {
            java.util.Arrays.fill(v, 0f);
            features(texts.get(i), v);
            Embedder.normalizeToF16(v, 0, out, offset + i * DIM);
        }
    }

    static void features(String text, float[] v) {
        for (String token : text.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+")) {
            if (token.isEmpty()) {
                continue;
            }
            add(v, token, 1f);
            String padded = "<" + token + ">";
            int[] cps = padded.codePoints().toArray();
            for (int k = 0; k + 3 <= cps.length; k++) {
                add(v, new String(cps, k, 3), TRIGRAM_WEIGHT);
            }
        }
    }

    private static void add(float[] v, String feature, float weight) {
        long h = fnv1a64(feature.getBytes(StandardCharsets.UTF_8));
        int bucket = (int) Long.remainderUnsigned(h, DIM);
        v[bucket] += (h < 0) ? -weight : weight; // the top bit picks the sign
    }

    static long fnv1a64(byte[] bytes) {
        long h = 0xcbf29ce484222325L;
        for (byte b : bytes) {
            h ^= (b & 0xff);
            h *= 0x100000001b3L;
        }
        return h;
    }
}
