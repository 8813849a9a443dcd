package io.github.semyonsinchenko.safetensors.sampler.python;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.semyonsinchenko.safetensors.sampler.Batch;
import io.github.semyonsinchenko.safetensors.sampler.BatchTensor;
import io.github.semyonsinchenko.safetensors.sampler.Fixtures;
import io.github.semyonsinchenko.safetensors.sampler.Sampler;
import io.github.semyonsinchenko.safetensors.sampler.SamplerConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The flat description the Python binding reads matches the batch's own tensors. */
class NumpyBindingTest {

    @Test
    void describesEveryTensorInOrder() throws Exception {
        SamplerConfig config = SamplerConfig.builder().batchSize(3).sequenceLength(128).maxRowsPerSeq(32)
                .emitCategoricalRange(true).threads(1).build();
        try (Sampler sampler = Sampler.open(Fixtures.db(), config); Batch batch = sampler.nextTrain()) {
            List<BatchTensor> tensors = batch.tensors();
            String[] names = NumpyBinding.names(batch);
            String[] dtypes = NumpyBinding.dtypes(batch);
            long[] desc = NumpyBinding.describe(batch);
            assertEquals(20, names.length);
            assertEquals("semantic_types", names[0]);
            assertEquals("cat_emb_count", names[19]);
            int i = 0;
            for (int t = 0; t < tensors.size(); t++) {
                BatchTensor bt = tensors.get(t);
                assertEquals(bt.name(), names[t]);
                assertEquals(bt.dtype().name(), dtypes[t]);
                long size = bt.data().byteSize();
                assertEquals(size == 0 ? 0 : bt.data().address(), desc[i++], bt.name());
                assertEquals(size, desc[i++], bt.name());
                int rank = (int) desc[i++];
                long[] shape = new long[rank];
                for (int d = 0; d < rank; d++) {
                    shape[d] = desc[i++];
                }
                assertArrayEquals(bt.shape(), shape, bt.name());
            }
            assertEquals(desc.length, i);
            assertEquals("F16", dtypes[15]);
        }
    }
}
