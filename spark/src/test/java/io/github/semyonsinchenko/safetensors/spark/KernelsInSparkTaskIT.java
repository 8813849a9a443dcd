package io.github.semyonsinchenko.safetensors.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Implementation;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * The native kernels run inside Spark tasks when the connector's classes come from the packaged
 * core jar (an integration test, so Maven puts the built jar, not target/classes, on the class
 * path): the library is found as a jar resource, copied out and loaded in the task's JVM.
 */
class KernelsInSparkTaskIT {

    /** Runs in a task: converts a known BF16 pattern and reports where the kernels came from. */
    private static final class ConvertInTask implements MapPartitionsFunction<Long, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public Iterator<String> call(Iterator<Long> rows) {
            short[] bf16 = {(short) 0x3F80, (short) 0xC000, (short) 0x7F80, (short) 0x0001};
            float[] f32 = new float[bf16.length];
            Kernels.convert(Conversion.BF16_TO_F32, bf16, 0, f32, 0, bf16.length);
            String jar = Kernels.class.getProtectionDomain().getCodeSource().getLocation().getPath();
            String library = Kernels.nativeLibraryPath().map(Path::toString).orElse("-");
            return List.of(Kernels.implementation() + "|" + jar + "|" + library + "|" + Arrays.toString(f32))
                    .iterator();
        }
    }

    @Test
    void aTaskConvertsWithTheNativeLibraryLoadedFromTheCoreJar() {
        SparkSession spark = SparkSession.builder()
                .master("local[2]")
                .appName("kernels-in-task")
                .config("spark.ui.enabled", "false")
                .getOrCreate();
        try {
            List<String> results = spark.range(0, 4, 1, 4)
                    .mapPartitions(new ConvertInTask(), Encoders.STRING())
                    .collectAsList();
            assertEquals(4, results.size(), "one report per task");
            String expected = Arrays.toString(new float[] {1f, -2f, Float.POSITIVE_INFINITY, Float.intBitsToFloat(0x00010000)});
            for (String r : results) {
                String[] f = r.split("\\|");
                assertEquals(Implementation.NATIVE.name(), f[0], r);
                assertTrue(f[1].endsWith(".jar"), "Kernels must come from the packaged core jar: " + r);
                assertTrue(f[2].contains("safetensors-native-"), "the library is the copy extracted from the jar: " + r);
                assertEquals(expected, f[3], r);
            }
        } finally {
            spark.stop();
        }
    }
}
