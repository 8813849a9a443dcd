package io.github.semyonsinchenko.safetensors.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The typed heap-array overloads of {@link SafetensorsWriter#add}: staged through a byte[] buffer. */
class SafetensorsWriterHeapArrayTest {
    @TempDir
    Path tmp;

    @Test
    void everyTypedArrayRoundTrips() throws IOException {
        short[] s = {1, -2, 0x3C00};
        int[] i = {7, -7, Integer.MIN_VALUE};
        long[] l = {-1, 0, Long.MAX_VALUE};
        float[] f = {1.5f, -0.0f, Float.NaN};
        double[] d = {Math.PI, Double.MIN_VALUE};
        Path file = tmp.resolve("typed.safetensors");
        new SafetensorsWriter()
                .add("s", Dtype.I16, new long[] {3}, s)
                .add("i", Dtype.I32, new long[] {3}, i)
                .add("l", Dtype.I64, new long[] {3}, l)
                .add("f", Dtype.F32, new long[] {3}, f)
                .add("d", Dtype.F64, new long[] {2}, d)
                .write(file);
        try (SafetensorsFile st = SafetensorsFile.open(file)) {
            assertArrayEquals(s, st.tensor("s").toShortArray());
            assertArrayEquals(i, st.tensor("i").toIntArray());
            assertArrayEquals(l, st.tensor("l").toLongArray());
            assertArrayEquals(f, st.tensor("f").toFloatArray());
            assertArrayEquals(d, st.tensor("d").toDoubleArray());
        }
    }

    @Test
    void elementsAreWrittenLittleEndian() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new SafetensorsWriter().add("x", Dtype.I32, new long[] {1}, new int[] {0x01020304}).write(out);
        byte[] bytes = out.toByteArray();
        byte[] data = java.util.Arrays.copyOfRange(bytes, bytes.length - 4, bytes.length);
        assertArrayEquals(new byte[] {4, 3, 2, 1}, data);
    }

    @Test
    void arraysLargerThanTheStagingBufferAreWrittenWhole() throws IOException {
        float[] big = new float[1_500_000]; // 6 MB: more than one 4 MiB staging chunk
        for (int k = 0; k < big.length; k++) {
            big[k] = k * 0.5f;
        }
        Path file = tmp.resolve("big.safetensors");
        new SafetensorsWriter().add("big", Dtype.F32, new long[] {big.length}, big).write(file);
        try (SafetensorsFile st = SafetensorsFile.open(file)) {
            assertArrayEquals(big, st.tensor("big").toFloatArray());
        }
    }
}
