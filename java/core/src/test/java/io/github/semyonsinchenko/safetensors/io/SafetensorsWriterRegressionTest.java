package io.github.semyonsinchenko.safetensors.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Regressions for writer bugs found by the round-trip property test. */
class SafetensorsWriterRegressionTest {

    /**
     * Typed heap arrays were copied into the byte[] staging buffer with their aligned element
     * layouts, which a byte[] segment cannot satisfy: every short[]/int[]/long[]/float[]/double[]
     * tensor failed with "Destination segment incompatible with alignment constraints".
     */
    @Test
    void typedArraysAreWrittenLittleEndian(@TempDir Path tmp) throws IOException {
        SafetensorsWriter w = new SafetensorsWriter()
                .add("s", Dtype.I16, new long[] {2}, new short[] {1, -2})
                .add("i", Dtype.I32, new long[] {2}, new int[] {3, -4})
                .add("l", Dtype.I64, new long[] {1}, new long[] {0x0102030405060708L})
                .add("f", Dtype.F32, new long[] {1}, new float[] {1.5f})
                .add("d", Dtype.F64, new long[] {1}, new double[] {-2.25});
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        w.write(out);
        Path file = tmp.resolve("typed.safetensors");
        w.write(file);
        try (SafetensorsFile f = SafetensorsFile.open(file)) {
            assertArrayEquals(new short[] {1, -2}, f.tensor("s").toShortArray());
            assertArrayEquals(new int[] {3, -4}, f.tensor("i").toIntArray());
            assertArrayEquals(new long[] {0x0102030405060708L}, f.tensor("l").toLongArray());
            assertArrayEquals(new float[] {1.5f}, f.tensor("f").toFloatArray());
            assertArrayEquals(new double[] {-2.25}, f.tensor("d").toDoubleArray());
            assertArrayEquals(new byte[] {8, 7, 6, 5, 4, 3, 2, 1}, f.tensor("l").toByteArray());
        }
    }

    /** More elements than the 4 MiB staging buffer holds: the copy runs in several chunks. */
    @Test
    void typedArraysLargerThanTheStagingBuffer(@TempDir Path tmp) throws IOException {
        float[] big = new float[(5 << 20) / 4 + 3];
        for (int i = 0; i < big.length; i++) {
            big[i] = i * 0.5f;
        }
        Path file = tmp.resolve("big.safetensors");
        new SafetensorsWriter().add("big", Dtype.F32, new long[] {big.length}, big).write(file);
        try (SafetensorsFile f = SafetensorsFile.open(file)) {
            assertArrayEquals(big, f.tensor("big").toFloatArray());
        }
    }
}
