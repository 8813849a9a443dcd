package io.github.semyonsinchenko.safetensors.kernels;

import static io.github.semyonsinchenko.safetensors.kernels.ScalarKernels.F32;
import static io.github.semyonsinchenko.safetensors.kernels.ScalarKernels.I16;
import static io.github.semyonsinchenko.safetensors.kernels.ScalarKernels.I32;
import static io.github.semyonsinchenko.safetensors.kernels.ScalarKernels.I64;
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
        switch (c) {
            case BF16_TO_F32 -> {
                for (long i = from; i < to; i++) {
                    dst.set(I32, i * 4, ScalarKernels.bf16ToF32(src.get(I16, i * 2)));
                }
            }
            case F32_TO_BF16_RNE -> {
                for (long i = from; i < to; i++) {
                    dst.set(I16, i * 2, ScalarKernels.f32ToBf16Rne(src.get(I32, i * 4)));
                }
            }
            case F32_TO_BF16_TRUNC -> {
                for (long i = from; i < to; i++) {
                    dst.set(I16, i * 2, ScalarKernels.f32ToBf16Trunc(src.get(I32, i * 4)));
                }
            }
            case F16_TO_F32 -> {
                for (long i = from; i < to; i++) {
                    dst.set(I32, i * 4, ScalarKernels.f16ToF32(src.get(I16, i * 2)));
                }
            }
            case F32_TO_F16_RNE -> {
                for (long i = from; i < to; i++) {
                    dst.set(I16, i * 2, ScalarKernels.f32ToF16Rne(src.get(I32, i * 4)));
                }
            }
            case F32_TO_F16_TRUNC -> {
                for (long i = from; i < to; i++) {
                    dst.set(I16, i * 2, ScalarKernels.f32ToF16Trunc(src.get(I32, i * 4)));
                }
            }
            case F16_TO_BF16 -> {
                for (long i = from; i < to; i++) {
                    dst.set(I16, i * 2, ScalarKernels.f16ToBf16(src.get(I16, i * 2)));
                }
            }
            case BF16_TO_F16 -> {
                for (long i = from; i < to; i++) {
                    dst.set(I16, i * 2, ScalarKernels.bf16ToF16(src.get(I16, i * 2)));
                }
            }
            case I8_TO_F32 -> {
                for (long i = from; i < to; i++) {
                    dst.set(F32, i * 4, src.get(I8, i));
                }
            }
            case U8_TO_F32 -> {
                for (long i = from; i < to; i++) {
                    dst.set(F32, i * 4, src.get(I8, i) & 0xFF);
                }
            }
            case I16_TO_F32 -> {
                for (long i = from; i < to; i++) {
                    dst.set(F32, i * 4, src.get(I16, i * 2));
                }
            }
            case U16_TO_F32 -> {
                for (long i = from; i < to; i++) {
                    dst.set(F32, i * 4, src.get(I16, i * 2) & 0xFFFF);
                }
            }
            case I32_TO_F32 -> {
                for (long i = from; i < to; i++) {
                    dst.set(F32, i * 4, (float) src.get(I32, i * 4));
                }
            }
            case U32_TO_F32 -> {
                for (long i = from; i < to; i++) {
                    dst.set(F32, i * 4, ScalarKernels.u32ToF32(src.get(I32, i * 4)));
                }
            }
            case I64_TO_F32 -> {
                for (long i = from; i < to; i++) {
                    dst.set(F32, i * 4, (float) src.get(I64, i * 8));
                }
            }
            case U64_TO_F32 -> {
                for (long i = from; i < to; i++) {
                    dst.set(F32, i * 4, ScalarKernels.u64ToF32(src.get(I64, i * 8)));
                }
            }
            case F64_TO_F32 -> {
                for (long i = from; i < to; i++) {
                    dst.set(I32, i * 4, ScalarKernels.f64ToF32(src.get(I64, i * 8)));
                }
            }
        }
    }
}
