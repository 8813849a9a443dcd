package io.github.semyonsinchenko.safetensors.sampler.python;

import io.github.semyonsinchenko.safetensors.sampler.Batch;
import io.github.semyonsinchenko.safetensors.sampler.BatchTensor;
import java.util.List;

/**
 * The Java half of the Python binding ({@code safetensors_jvm_sampler}), called through JPype and by
 * nothing else: what the binding needs to wrap a {@link Batch} as numpy arrays without copying: every
 * tensor's address, byte size and shape in one {@code long[]}, so one call (not dozens of small
 * ones through JPype) describes a batch. The names and dtypes, which do not change from batch to
 * batch, are fetched once.
 *
 * <p>The addresses stay valid until the batch is closed; the Python side closes it only when no
 * array over its memory remains.
 */
public final class NumpyBinding {
    private NumpyBinding() {}

    /**
     * The dict keys, in the reference's order.
     *
     * @param batch an open batch
     * @return the tensor names
     */
    public static String[] names(Batch batch) {
        List<BatchTensor> tensors = batch.tensors();
        String[] out = new String[tensors.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = tensors.get(i).name();
        }
        return out;
    }

    /**
     * The safetensors dtype names ({@code "I8"}, {@code "F16"}, ...), in {@link #names} order.
     *
     * @param batch an open batch
     * @return the dtype names
     */
    public static String[] dtypes(Batch batch) {
        List<BatchTensor> tensors = batch.tensors();
        String[] out = new String[tensors.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = tensors.get(i).dtype().name();
        }
        return out;
    }

    /**
     * Per tensor, in {@link #names} order: address, byte size, rank, then the dimensions. A tensor
     * of zero bytes (no distinct text in the batch) reports address 0.
     *
     * @param batch an open batch
     * @return the descriptions, concatenated
     */
    public static long[] describe(Batch batch) {
        List<BatchTensor> tensors = batch.tensors();
        int n = 0;
        for (BatchTensor t : tensors) {
            n += 3 + t.shape().length;
        }
        long[] out = new long[n];
        int i = 0;
        for (BatchTensor t : tensors) {
            long[] shape = t.shape();
            long size = t.data().byteSize();
            out[i++] = size == 0 ? 0 : t.data().address();
            out[i++] = size;
            out[i++] = shape.length;
            for (long d : shape) {
                out[i++] = d;
            }
        }
        return out;
    }
}
