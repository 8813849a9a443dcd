import io.github.semyonsinchenko.safetensors.sampler.Batch;
import io.github.semyonsinchenko.safetensors.sampler.Sampler;
import io.github.semyonsinchenko.safetensors.sampler.SamplerConfig;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The Java baseline of the Python sampler benchmark: pull training batches through the Java API
 * and close each one (what a Java consumer does), timed after a warm-up. bench.py calls
 * {@link #pull} in the JVM it embeds, so both paths share one JVM and its JIT state.
 * Standalone: java -cp safetensors-sampler-*-all.jar JavaPull.java DB BATCH SEQ WARMUP BATCHES
 */
public final class JavaPull {
    public static void main(String[] args) throws Exception {
        double bps = pull(Path.of(args[0]), Integer.parseInt(args[1]), Integer.parseInt(args[2]),
                Integer.parseInt(args[3]), Integer.parseInt(args[4]));
        System.out.println(String.format(Locale.ROOT, "batches_per_s=%.4f", bps));
    }

    /** Batches per second over {@code n} timed pulls after {@code warmup} untimed ones. */
    public static double pull(Path db, int b, int s, int warmup, int n) throws Exception {
        SamplerConfig config = SamplerConfig.builder().batchSize(b).sequenceLength(s).build();
        try (Sampler sampler = Sampler.open(db, config)) {
            for (int i = 0; i < warmup; i++) {
                sampler.nextTrain().close();
            }
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                try (Batch batch = sampler.nextTrain()) {
                    if (batch.batchSize() != b) {
                        throw new AssertionError("unexpected batch " + batch);
                    }
                }
            }
            return n / ((System.nanoTime() - t0) / 1e9);
        }
    }
}
