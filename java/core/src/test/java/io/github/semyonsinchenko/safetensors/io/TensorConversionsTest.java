package io.github.semyonsinchenko.safetensors.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The typed API's conversions on a mapped file: {@code toFloatArray}, {@code toDoubleArray}, the
 * getters and {@link Tensor#to} agree element by element with {@link Kernels#convertBits} (the
 * kernels' rules, one home) for every dtype they take, every bit pattern of the 8- and 16-bit ones;
 * lossy or impossible requests are refused naming the tensor.
 */
class TensorConversionsTest {
    @TempDir
    Path tmp;

    private static final Dtype[] EXACT_TO_F32 = {Dtype.F16, Dtype.BF16, Dtype.F8_E4M3, Dtype.F8_E5M2, Dtype.F8_E8M0,
        Dtype.F8_E4M3FNUZ, Dtype.F8_E5M2FNUZ, Dtype.I8, Dtype.U8, Dtype.I16, Dtype.U16};

    /** Every bit pattern of each 8- and 16-bit dtype, as one tensor each, written and mapped. */
    private Path writeAllPatterns() throws IOException {
        SafetensorsWriter w = new SafetensorsWriter();
        for (Dtype d : EXACT_TO_F32) {
            int n = 1 << d.bits();
            byte[] bytes = new byte[n * d.byteSize()];
            for (int i = 0; i < n; i++) {
                bytes[i * d.byteSize()] = (byte) i;
                if (d.byteSize() == 2) {
                    bytes[i * 2 + 1] = (byte) (i >>> 8);
                }
            }
            w.add(d.name(), d, new long[] {n}, bytes);
        }
        SplittableRandom rnd = new SplittableRandom(3);
        for (Dtype d : new Dtype[] {Dtype.F32, Dtype.F64, Dtype.I32, Dtype.U32, Dtype.I64, Dtype.U64}) {
            byte[] bytes = new byte[4096 * d.byteSize()];
            rnd.nextBytes(bytes);
            w.add(d.name(), d, new long[] {64, 64}, bytes);
        }
        Path p = tmp.resolve("all.safetensors");
        w.write(p);
        return p;
    }

    private static long rawBits(Tensor t, long i) {
        MemorySegment d = t.data();
        return switch (t.dtype().byteSize()) {
            case 1 -> d.get(ValueLayout.JAVA_BYTE, i) & 0xFFL;
            case 2 -> d.get(ValueLayout.JAVA_SHORT_UNALIGNED, i * 2) & 0xFFFFL;
            case 4 -> d.get(ValueLayout.JAVA_INT_UNALIGNED, i * 4) & 0xFFFFFFFFL;
            default -> d.get(ValueLayout.JAVA_LONG_UNALIGNED, i * 8);
        };
    }

    @Test
    void floatsWidenExactlyByTheKernelsRules() throws IOException {
        try (SafetensorsFile f = SafetensorsFile.open(writeAllPatterns())) {
            for (Dtype d : EXACT_TO_F32) {
                Tensor t = f.tensor(d.name());
                Conversion c = Conversion.toF32(d).orElseThrow();
                float[] floats = t.toFloatArray();
                double[] doubles = t.toDoubleArray();
                assertEquals(t.elementCount(), floats.length);
                for (int i = 0; i < floats.length; i++) {
                    int want = (int) Kernels.convertBits(c, rawBits(t, i));
                    assertEquals(want, Float.floatToRawIntBits(floats[i]), d + " pattern " + i);
                    assertEquals(want, Float.floatToRawIntBits(t.getFloat(i)), d + " getFloat " + i);
                    long wantDouble = Kernels.convertBits(Conversion.F32_TO_F64, want);
                    assertEquals(wantDouble, Double.doubleToRawLongBits(doubles[i]), d + " toDoubleArray " + i);
                    assertEquals(wantDouble, Double.doubleToRawLongBits(t.getAsDouble(i)), d + " getAsDouble " + i);
                    if (d.name().startsWith("F") || d == Dtype.BF16) {
                        assertEquals(wantDouble, Double.doubleToRawLongBits(t.getDouble(i)), d + " getDouble " + i);
                    }
                }
            }
            // F32 is read as stored; to F64 keeps every payload.
            Tensor f32 = f.tensor("F32");
            float[] same = f32.toFloatArray();
            double[] wide = f32.toDoubleArray();
            for (int i = 0; i < same.length; i++) {
                assertEquals((int) rawBits(f32, i), Float.floatToRawIntBits(same[i]));
                assertEquals(Kernels.convertBits(Conversion.F32_TO_F64, rawBits(f32, i)),
                        Double.doubleToRawLongBits(wide[i]));
            }
            // The integers to F64: exact for 32 bits, rounded for 64.
            for (String name : new String[] {"I32", "U32", "I64", "U64"}) {
                Tensor t = f.tensor(name);
                Conversion c = Conversion.of(t.dtype(), Dtype.F64).orElseThrow();
                double[] got = t.toDoubleArray();
                for (int i = 0; i < got.length; i++) {
                    assertEquals(Kernels.convertBits(c, rawBits(t, i)), Double.doubleToRawLongBits(got[i]), name);
                    assertEquals(got[i], t.getAsDouble(i), name);
                }
                UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, t::toFloatArray);
                assertTrue(e.getMessage().contains("tensor \"" + name + "\" is " + name), e.getMessage());
                assertThrows(UnsupportedOperationException.class, () -> t.getFloat(0));
            }
            assertThrows(UnsupportedOperationException.class, () -> f.tensor("F64").toFloatArray());
        }
    }

    @Test
    void toConvertsWithTheKernelsAndOutlivesTheFile() throws IOException {
        Path p = writeAllPatterns();
        try (Arena arena = Arena.ofConfined()) {
            Tensor bf16;
            Tensor narrowed;
            Tensor copy;
            Tensor e4m3;
            float[] f32Values;
            try (SafetensorsFile f = SafetensorsFile.open(p)) {
                f32Values = f.tensor("F32").toFloatArray();
                bf16 = f.tensor("BF16").to(Dtype.F32, arena);
                narrowed = f.tensor("F32").to(Dtype.BF16, arena);
                copy = f.tensor("U8").to(Dtype.U8, arena);
                e4m3 = f.tensor("F8_E4M3").to(Dtype.F64, arena);
                assertThrows(UnsupportedOperationException.class, () -> f.tensor("F64").to(Dtype.F16, arena),
                        "F64 to F16 would round twice; no kernel does it");
                assertThrows(UnsupportedOperationException.class, () -> f.tensor("F16").to(Dtype.F8_E4M3, arena));
            }
            // Valid after the file is closed: the arena owns the copies.
            assertEquals(Dtype.F32, bf16.dtype());
            assertEquals(65536, bf16.elementCount());
            assertEquals(Float.intBitsToFloat(0x3F80 << 16), bf16.getFloat(0x3F80));
            assertArrayEquals(new long[] {64, 64}, narrowed.shape());
            for (int i = 0; i < f32Values.length; i++) {
                short want = (short) Kernels.convertBits(Conversion.F32_TO_BF16_RNE,
                        Float.floatToRawIntBits(f32Values[i]));
                assertEquals(want, narrowed.getShort(i));
            }
            assertEquals(200, Byte.toUnsignedInt(copy.getByte(200)));
            assertEquals(448.0, e4m3.getDouble(0x7E), "the largest F8_E4M3");
            assertTrue(Double.isNaN(e4m3.getDouble(0x7F)));
        }
    }
}
