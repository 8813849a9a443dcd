package example;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.loader.LoadedTensor;
import io.github.semyonsinchenko.safetensors.loader.LoaderConfig;
import io.github.semyonsinchenko.safetensors.loader.SafetensorsLoader;
import io.github.semyonsinchenko.safetensors.sampler.Batch;
import io.github.semyonsinchenko.safetensors.sampler.Sampler;
import io.github.semyonsinchenko.safetensors.sampler.SamplerConfig;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticDatabase;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes, reads, converts, loads and samples, printing one line per step. Usage: Quickstart DIR */
public final class Quickstart {
    public static void main(String[] args) throws Exception {
        Path dir = Files.createDirectories(Path.of(args[0]));
        Path model = dir.resolve("model.safetensors");

        new SafetensorsWriter()
                .metadata("format", "pt")
                .add("embeddings.weight", Dtype.F32, new long[] {2, 3}, new float[] {1, 2, 3, 4, 5, 6})
                .add("scale", Dtype.BF16, new long[] {2}, new short[] {0x3f80, (short) 0xc000})  // 1.0, -2.0
                .write(model);

        try (SafetensorsFile file = SafetensorsFile.open(model); Arena arena = Arena.ofConfined()) {
            Tensor w = file.tensor("embeddings.weight");
            System.out.printf("read: %s %s %s, last %.1f%n", w.name(), w.dtype(), java.util.Arrays.toString(w.shape()),
                    w.getAsDouble(5));
            Tensor scale = file.tensor("scale");
            MemorySegment out = arena.allocate(scale.elementCount() * 4);
            Kernels.convert(Conversion.BF16_TO_F32, scale.data(), out, scale.elementCount());
            System.out.printf("convert: BF16 -> F32 %.1f %.1f (%s)%n", out.getAtIndex(ValueLayout.JAVA_FLOAT, 0),
                    out.getAtIndex(ValueLayout.JAVA_FLOAT, 1), Kernels.description());
        }

        LoaderConfig config = LoaderConfig.fromEnvironment().convertTo(Dtype.F32).build();
        try (SafetensorsLoader loader = SafetensorsLoader.open(config, model.toUri().toString())) {
            int n = 0;
            for (LoadedTensor t : loader) {
                try (t) {
                    n++;
                }
            }
            System.out.printf("load: %d tensors in %d chunks%n", n, loader.plan().chunks().size());
        }

        Path db = dir.resolve("db");
        SyntheticDatabase.generate(db, 2000, 7, SyntheticDatabase.Embeddings.RANDOM_UNIT);
        SamplerConfig samplerConfig = SamplerConfig.builder().batchSize(4).sequenceLength(128).maxRowsPerSeq(32).build();
        try (Sampler sampler = Sampler.open(db, samplerConfig); Batch batch = sampler.nextTrain()) {
            System.out.printf("sample: %d tensors, fk_adj %d bytes%n", batch.tensors().size(),
                    batch.tensor(Batch.FK_ADJ).data().byteSize());
        }
    }
}
