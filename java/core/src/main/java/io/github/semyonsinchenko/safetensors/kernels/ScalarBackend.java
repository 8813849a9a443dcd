package io.github.semyonsinchenko.safetensors.kernels;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.F32;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.F64;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I16;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I32;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I64;
import static io.github.semyonsinchenko.safetensors.kernels.ScalarKernels.I8;

import java.lang.foreign.MemorySegment;

/** The plain Java path: loops over {@link ScalarKernels}. Always available. */
final class ScalarBackend extends JavaBackend {
    static final ScalarBackend INSTANCE = new ScalarBackend();

    private ScalarBackend() {}

    @Override
    Implementation implementation() {
        return Implementation.SCALAR;
    }

    @Override
    void convert(Conversion c, MemorySegment src, MemorySegment dst, long n) {
        convertRange(c, src, dst, 0, n);
    }

    /** Converts elements {@code [from, to)}; also the tail loop of the Vector path. */
    static void convertRange(Conversion c, MemorySegment src, MemorySegment dst, long from, long to) {
        // One small method per kernel: C2 compiles each loop on its own, with its own profile.
        switch (c) {
            case BF16_TO_F32 -> bf16ToF32(src, dst, from, to);
            case F32_TO_BF16_RNE -> f32ToBf16Rne(src, dst, from, to);
            case F32_TO_BF16_TRUNC -> f32ToBf16Trunc(src, dst, from, to);
            case F16_TO_F32 -> f16ToF32(src, dst, from, to);
            case F32_TO_F16_RNE -> f32ToF16Rne(src, dst, from, to);
            case F32_TO_F16_TRUNC -> f32ToF16Trunc(src, dst, from, to);
            case F16_TO_BF16 -> f16ToBf16(src, dst, from, to);
            case BF16_TO_F16 -> bf16ToF16(src, dst, from, to);
            case I8_TO_F32 -> i8ToF32(src, dst, from, to);
            case U8_TO_F32 -> u8ToF32(src, dst, from, to);
            case I16_TO_F32 -> i16ToF32(src, dst, from, to);
            case U16_TO_F32 -> u16ToF32(src, dst, from, to);
            case I32_TO_F32 -> i32ToF32(src, dst, from, to);
            case U32_TO_F32 -> u32ToF32(src, dst, from, to);
            case I64_TO_F32 -> i64ToF32(src, dst, from, to);
            case U64_TO_F32 -> u64ToF32(src, dst, from, to);
            case F64_TO_F32 -> f64ToF32(src, dst, from, to);
            case F8_E4M3_TO_F32 -> lookup(ScalarKernels.F8_E4M3, src, dst, from, to);
            case F8_E5M2_TO_F32 -> lookup(ScalarKernels.F8_E5M2, src, dst, from, to);
            case F8_E8M0_TO_F32 -> lookup(ScalarKernels.F8_E8M0, src, dst, from, to);
            case F8_E4M3FNUZ_TO_F32 -> lookup(ScalarKernels.F8_E4M3FNUZ, src, dst, from, to);
            case F8_E5M2FNUZ_TO_F32 -> lookup(ScalarKernels.F8_E5M2FNUZ, src, dst, from, to);
            case F32_TO_F64 -> f32ToF64(src, dst, from, to);
            case I32_TO_F64 -> i32ToF64(src, dst, from, to);
            case U32_TO_F64 -> u32ToF64(src, dst, from, to);
            case I64_TO_F64 -> i64ToF64(src, dst, from, to);
            case U64_TO_F64 -> u64ToF64(src, dst, from, to);
        }
    }

    /** An 8-bit source through a table of its 256 results (the F8 formats). */
    private static void lookup(int[] table, MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(I32, i * 4, table[src.get(I8, i) & 0xFF]);
        }
    }

    private static void f32ToF64(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(I64, i * 8, ScalarKernels.f32ToF64(src.get(I32, i * 4)));
        }
    }

    private static void i32ToF64(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F64, i * 8, src.get(I32, i * 4));
        }
    }

    private static void u32ToF64(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F64, i * 8, Integer.toUnsignedLong(src.get(I32, i * 4)));
        }
    }

    private static void i64ToF64(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F64, i * 8, (double) src.get(I64, i * 8));
        }
    }

    private static void u64ToF64(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F64, i * 8, ScalarKernels.u64ToF64(src.get(I64, i * 8)));
        }
    }

    private static void bf16ToF32(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(I32, i * 4, ScalarKernels.bf16ToF32(src.get(I16, i * 2)));
        }
    }

    private static void f32ToBf16Rne(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(I16, i * 2, ScalarKernels.f32ToBf16Rne(src.get(I32, i * 4)));
        }
    }

    private static void f32ToBf16Trunc(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(I16, i * 2, ScalarKernels.f32ToBf16Trunc(src.get(I32, i * 4)));
        }
    }

    private static void f16ToF32(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(I32, i * 4, ScalarKernels.f16ToF32(src.get(I16, i * 2)));
        }
    }

    private static void f32ToF16Rne(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(I16, i * 2, ScalarKernels.f32ToF16Rne(src.get(I32, i * 4)));
        }
    }

    private static void f32ToF16Trunc(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(I16, i * 2, ScalarKernels.f32ToF16Trunc(src.get(I32, i * 4)));
        }
    }

    private static void f16ToBf16(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(I16, i * 2, ScalarKernels.f16ToBf16(src.get(I16, i * 2)));
        }
    }

    private static void bf16ToF16(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(I16, i * 2, ScalarKernels.bf16ToF16(src.get(I16, i * 2)));
        }
    }

    private static void i8ToF32(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F32, i * 4, src.get(I8, i));
        }
    }

    private static void u8ToF32(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F32, i * 4, src.get(I8, i) & 0xFF);
        }
    }

    private static void i16ToF32(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F32, i * 4, src.get(I16, i * 2));
        }
    }

    private static void u16ToF32(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F32, i * 4, src.get(I16, i * 2) & 0xFFFF);
        }
    }

    private static void i32ToF32(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F32, i * 4, (float) src.get(I32, i * 4));
        }
    }

    private static void u32ToF32(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F32, i * 4, ScalarKernels.u32ToF32(src.get(I32, i * 4)));
        }
    }

    private static void i64ToF32(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F32, i * 4, (float) src.get(I64, i * 8));
        }
    }

    private static void u64ToF32(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(F32, i * 4, ScalarKernels.u64ToF32(src.get(I64, i * 8)));
        }
    }

    private static void f64ToF32(MemorySegment src, MemorySegment dst, long from, long to) {
        for (long i = from; i < to; i++) {
            dst.set(I32, i * 4, ScalarKernels.f64ToF32(src.get(I64, i * 8)));
        }
    }
}
