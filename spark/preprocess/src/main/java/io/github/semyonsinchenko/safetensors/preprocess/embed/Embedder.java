package io.github.semyonsinchenko.safetensors.preprocess.embed;

import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import java.util.List;

/**
 * Turns vocabulary strings into the database's embedding rows: {@value DatabaseLayout#EMBEDDING_DIM}
 * F16 values per string, L2-normalized in f32 and rounded to nearest-even. Implementations are
 * created on each executor from an {@link EmbedderSpec}.
 */
public interface Embedder extends AutoCloseable {

    /** Values per embedding row. */
    int DIM = DatabaseLayout.EMBEDDING_DIM;

    /** Writes {@code texts.size() * DIM} F16 bit patterns to {@code out} from {@code offset}. */
    void embed(List<String> texts, short[] out, int offset);

    @Override
    default void close() {}

    /**
     * headwater's post-processing of one raw vector: its first {@value #DIM} floats (from
     * {@code from}), L2-normalized in f32 (sum of squares left to right, a zero vector when the
     * norm is 0), then F32→F16 with round-to-nearest-even through the kernels.
     */
    static void normalizeToF16(float[] raw, int from, short[] out, int offset) {
        float sumSquares = 0f;
        for (int i = 0; i < DIM; i++) {
            float x = raw[from + i];
            sumSquares += x * x;
        }
        float norm = (float) Math.sqrt(sumSquares);
        float inv = norm > 0f ? 1f / norm : 0f;
        float[] scaled = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            scaled[i] = raw[from + i] * inv;
        }
        Kernels.convert(Conversion.F32_TO_F16_RNE, scaled, 0, out, offset, DIM);
    }
}
