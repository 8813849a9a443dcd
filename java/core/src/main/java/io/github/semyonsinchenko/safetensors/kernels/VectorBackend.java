package io.github.semyonsinchenko.safetensors.kernels;

import static jdk.incubator.vector.VectorOperators.B2F;
import static jdk.incubator.vector.VectorOperators.D2F;
import static jdk.incubator.vector.VectorOperators.EQ;
import static jdk.incubator.vector.VectorOperators.F2I;
import static jdk.incubator.vector.VectorOperators.GE;
import static jdk.incubator.vector.VectorOperators.GT;
import static jdk.incubator.vector.VectorOperators.I2F;
import static jdk.incubator.vector.VectorOperators.I2S;
import static jdk.incubator.vector.VectorOperators.L2F;
import static jdk.incubator.vector.VectorOperators.L2I;
import static jdk.incubator.vector.VectorOperators.LSHL;
import static jdk.incubator.vector.VectorOperators.LSHR;
import static jdk.incubator.vector.VectorOperators.LT;
import static jdk.incubator.vector.VectorOperators.S2F;
import static jdk.incubator.vector.VectorOperators.ZERO_EXTEND_B2I;
import static jdk.incubator.vector.VectorOperators.ZERO_EXTEND_S2I;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The Java path with the incubating Vector API. This is the only class that names
 * {@code jdk.incubator.vector}; {@link Kernels} loads it by reflection and only when that module is
 * in the boot layer, so a JVM started without {@code --add-modules=jdk.incubator.vector} never
 * links it. Full vectors are computed here with the same integer rules as {@link ScalarKernels}
 * (plus two exact float tricks, noted where used); the tails run {@link ScalarBackend}.
 */
final class VectorBackend extends JavaBackend {
    private static final ByteOrder LE = LittleEndian.ORDER;

    /** N int/float lanes: the preferred shape. */
    private static final VectorSpecies<Integer> IS = IntVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Float> FS = FloatVector.SPECIES_PREFERRED;
    private static final int N = IS.length();
    private static final int BITS = IS.vectorBitSize();
    /** N short lanes (half the preferred shape). */
    private static final VectorSpecies<Short> SS = VectorSpecies.of(short.class, VectorShape.forBitSize(BITS / 2));
    /** N byte lanes (a quarter of the preferred shape), or null when that is below the 64-bit minimum. */
    private static final VectorSpecies<Byte> BS =
            BITS / 4 >= 64 ? VectorSpecies.of(byte.class, VectorShape.forBitSize(BITS / 4)) : null;
    /** N/2 long/double lanes (the preferred shape) and the matching N/2 float/int lanes (half the shape). */
    private static final VectorSpecies<Long> LS = LongVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Double> DS = DoubleVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Float> FH = VectorSpecies.of(float.class, VectorShape.forBitSize(BITS / 2));
    private static final VectorSpecies<Integer> IH = VectorSpecies.of(int.class, VectorShape.forBitSize(BITS / 2));
    private static final int NH = LS.length();

    VectorBackend() {
        if (BITS < 128) {
            throw new UnsupportedOperationException("the preferred vector shape is " + BITS + " bits; need 128 or more");
        }
    }

    @Override
    Implementation implementation() {
        return Implementation.VECTOR;
    }

    @Override
    String describe() {
        return "VECTOR (" + BITS + "-bit)";
    }

    /** Elements per staging step (at most 64 KiB of 8-byte sources). */
    private static final int STAGE_ELEMENTS = 8192;

    /** Each thread's two staging buffers (source, destination) of native memory, freed with the thread. */
    private static final ThreadLocal<MemorySegment[]> STAGE = ThreadLocal.withInitial(() -> {
        Arena arena = Arena.ofAuto();
        return new MemorySegment[] {arena.allocate(STAGE_ELEMENTS * 8L, 64), arena.allocate(STAGE_ELEMENTS * 8L, 64)};
    });

    /**
     * The vectors touch native memory only; mapped and heap segments go through a small native
     * buffer per thread, in steps of {@value #STAGE_ELEMENTS} elements.
     *
     * <ul>
     *   <li>Mapped: the JDK turns a fault in {@link MemorySegment#copy} (a page lost because the file
     *       was truncated) into an {@link InternalError}, which {@link Kernels} reports, but a Vector
     *       API load or store on such a page aborts the JVM (C2 does not mark vector accesses as
     *       fault-tolerant).
     *   <li>Heap: C2 compiles a vector load or store on a heap array only when the array's element
     *       type, as it sees it, is the vector's (JDK 25, little-endian); otherwise it boxes every
     *       vector. That happens for a {@code float[]} written or read as ints, and it happened for
     *       F16→F32 into a {@code float[]} written as floats, where the JDK's store path had also
     *       seen {@code byte[]} segments: many times slower than the scalar loop, with garbage per
     *       element (bench/results/kernels-vector-staging.md). Each thread's buffers are 128 KiB.
     * </ul>
     */
    @Override
    void convert(Conversion c, MemorySegment src, MemorySegment dst, long n) {
        boolean stageSrc = !src.isNative() || src.isMapped();
        boolean stageDst = !dst.isNative() || dst.isMapped();
        if (!stageSrc && !stageDst) {
            convertDirect(c, src, dst, n);
            return;
        }
        int sb = c.sourceBytes();
        int tb = c.targetBytes();
        MemorySegment[] stage = STAGE.get();
        for (long i = 0; i < n; i += STAGE_ELEMENTS) {
            long m = Math.min(STAGE_ELEMENTS, n - i);
            MemorySegment from = src.asSlice(i * sb, m * sb);
            if (stageSrc) {
                MemorySegment.copy(from, 0, stage[0], 0, m * sb);
                from = stage[0];
            }
            MemorySegment to = stageDst ? stage[1] : dst.asSlice(i * tb, m * tb);
            convertDirect(c, from, to, m);
            if (stageDst) {
                MemorySegment.copy(stage[1], 0, dst, i * tb, m * tb);
            }
        }
    }

    private void convertDirect(Conversion c, MemorySegment src, MemorySegment dst, long n) {
        long done = switch (c) {
            case BF16_TO_F32 -> bf16ToF32(src, dst, n);
            case F32_TO_BF16_RNE -> f32ToBf16(src, dst, n, true);
            case F32_TO_BF16_TRUNC -> f32ToBf16(src, dst, n, false);
            case F16_TO_F32 -> f16ToF32(src, dst, n);
            case F32_TO_F16_RNE -> f32ToF16(src, dst, n, true);
            case F32_TO_F16_TRUNC -> f32ToF16(src, dst, n, false);
            case F16_TO_BF16 -> f16ToBf16(src, dst, n);
            case BF16_TO_F16 -> bf16ToF16(src, dst, n);
            case I8_TO_F32 -> i8ToF32(src, dst, n, false);
            case U8_TO_F32 -> i8ToF32(src, dst, n, true);
            case I16_TO_F32 -> i16ToF32(src, dst, n, false);
            case U16_TO_F32 -> i16ToF32(src, dst, n, true);
            case I32_TO_F32 -> i32ToF32(src, dst, n);
            case U32_TO_F32 -> u32ToF32(src, dst, n);
            case I64_TO_F32 -> i64ToF32(src, dst, n, false);
            case U64_TO_F32 -> i64ToF32(src, dst, n, true);
            case F64_TO_F32 -> f64ToF32(src, dst, n);
            default -> 0; // no vector kernel: the scalar loop below does all of it
        };
        ScalarBackend.convertRange(c, src, dst, done, n);
    }

    /** The end of the whole vectors of {@code lanes} in {@code n}; the caller does the rest. */
    private static long bound(long n, int lanes) {
        return n - n % lanes;
    }

    // ---- building blocks on N int lanes holding F32 bits or zero-extended 16-bit values ----

    private static IntVector load16(MemorySegment src, long i) {
        return (IntVector) ShortVector.fromMemorySegment(SS, src, i * 2, LE).convertShape(ZERO_EXTEND_S2I, IS, 0);
    }

    private static void store16(IntVector v, MemorySegment dst, long i) {
        ((ShortVector) v.convertShape(I2S, SS, 0)).intoMemorySegment(dst, i * 2, LE);
    }

    private static IntVector f16ToF32Bits(IntVector h) {
        IntVector a = h.and(0x7FFF).lanewise(LSHL, 13); // exponent and mantissa in F32 position
        IntVector sign = h.and(0x8000).lanewise(LSHL, 16);
        VectorMask<Integer> infNan = a.compare(GE, 0x0F800000); // F16 exponent 31
        VectorMask<Integer> tiny = a.compare(LT, 0x00800000); // F16 exponent 0
        IntVector normal = a.add(0x38000000); // rebias 15 -> 127
        IntVector special = a.add(0x70000000); // exponent 31 -> 255, payload kept
        // Zero and subnormals: mant * 2^-24 is exact in F32 (an integer below 1024, a power of two).
        IntVector sub = ((FloatVector) h.and(0x3FF).convert(I2F, 0)).mul(0x1p-24f).reinterpretAsInts();
        return normal.blend(special, infNan).blend(sub, tiny).or(sign);
    }

    private static IntVector f32ToBf16Bits(IntVector u, boolean rne) {
        IntVector r = rne
                ? u.add(u.lanewise(LSHR, 16).and(1)).add(0x7FFF).lanewise(LSHR, 16)
                : u.lanewise(LSHR, 16);
        VectorMask<Integer> nan = u.and(0x7FFFFFFF).compare(GT, 0x7F800000);
        return r.blend(u.lanewise(LSHR, 16).and(0x8000).or(0x7FC0), nan);
    }

    private static IntVector f32ToF16Bits(IntVector u, boolean rne) {
        IntVector sign = u.lanewise(LSHR, 16).and(0x8000);
        IntVector a = u.and(0x7FFFFFFF);
        VectorMask<Integer> nan = a.compare(GT, 0x7F800000);
        VectorMask<Integer> tiny = a.compare(LT, 0x38800000); // below 2^-14
        IntVector r = a.sub(0x38000000);
        IntVector res;
        if (rne) {
            IntVector normal = r.add(r.lanewise(LSHR, 13).and(1)).add(0xFFF).lanewise(LSHR, 13);
            // |x| + 0.5f has ulp 2^-24, so the float add rounds |x| to the F16 subnormal grid, ties
            // to even, exactly as the integer rule does; its low bits are the F16 bits.
            IntVector sub = a.reinterpretAsFloats().add(0.5f).reinterpretAsInts().sub(0x3F000000);
            res = normal.blend(sub, tiny).blend(0x7C00, a.compare(GE, 0x477FF000));
        } else {
            IntVector normal = r.lanewise(LSHR, 13);
            // |x| * 2^24 is exact and below 1024; F2I truncates toward zero.
            IntVector sub = (IntVector) a.reinterpretAsFloats().mul(0x1p24f).convert(F2I, 0);
            res = normal.blend(sub, tiny)
                    .blend(0x7BFF, a.compare(GE, 0x47800000))
                    .blend(0x7C00, a.compare(EQ, 0x7F800000));
        }
        IntVector nanBits = u.lanewise(LSHR, 13).and(0x3FF).or(0x7E00);
        return res.blend(nanBits, nan).or(sign);
    }

    // ---- kernels; each returns how many elements it did ----

    private static long bf16ToF32(MemorySegment src, MemorySegment dst, long n) {
        long end = bound(n, N);
        for (long i = 0; i < end; i += N) {
            load16(src, i).lanewise(LSHL, 16).intoMemorySegment(dst, i * 4, LE);
        }
        return end;
    }

    private static long f16ToF32(MemorySegment src, MemorySegment dst, long n) {
        long end = bound(n, N);
        for (long i = 0; i < end; i += N) {
            f16ToF32Bits(load16(src, i)).intoMemorySegment(dst, i * 4, LE);
        }
        return end;
    }

    private static long f32ToBf16(MemorySegment src, MemorySegment dst, long n, boolean rne) {
        long end = bound(n, N);
        for (long i = 0; i < end; i += N) {
            store16(f32ToBf16Bits(IntVector.fromMemorySegment(IS, src, i * 4, LE), rne), dst, i);
        }
        return end;
    }

    private static long f32ToF16(MemorySegment src, MemorySegment dst, long n, boolean rne) {
        long end = bound(n, N);
        for (long i = 0; i < end; i += N) {
            store16(f32ToF16Bits(IntVector.fromMemorySegment(IS, src, i * 4, LE), rne), dst, i);
        }
        return end;
    }

    private static long f16ToBf16(MemorySegment src, MemorySegment dst, long n) {
        long end = bound(n, N);
        for (long i = 0; i < end; i += N) {
            store16(f32ToBf16Bits(f16ToF32Bits(load16(src, i)), true), dst, i);
        }
        return end;
    }

    private static long bf16ToF16(MemorySegment src, MemorySegment dst, long n) {
        long end = bound(n, N);
        for (long i = 0; i < end; i += N) {
            store16(f32ToF16Bits(load16(src, i).lanewise(LSHL, 16), true), dst, i);
        }
        return end;
    }

    private static long i8ToF32(MemorySegment src, MemorySegment dst, long n, boolean unsigned) {
        if (BS == null) {
            return 0;
        }
        long end = bound(n, N);
        for (long i = 0; i < end; i += N) {
            ByteVector b = ByteVector.fromMemorySegment(BS, src, i, LE);
            FloatVector f = unsigned
                    ? (FloatVector) b.convertShape(ZERO_EXTEND_B2I, IS, 0).convert(I2F, 0)
                    : (FloatVector) b.convertShape(B2F, FS, 0);
            f.intoMemorySegment(dst, i * 4, LE);
        }
        return end;
    }

    private static long i16ToF32(MemorySegment src, MemorySegment dst, long n, boolean unsigned) {
        long end = bound(n, N);
        for (long i = 0; i < end; i += N) {
            FloatVector f = unsigned
                    ? (FloatVector) load16(src, i).convert(I2F, 0)
                    : (FloatVector) ShortVector.fromMemorySegment(SS, src, i * 2, LE).convertShape(S2F, FS, 0);
            f.intoMemorySegment(dst, i * 4, LE);
        }
        return end;
    }

    private static long i32ToF32(MemorySegment src, MemorySegment dst, long n) {
        long end = bound(n, N);
        for (long i = 0; i < end; i += N) {
            IntVector.fromMemorySegment(IS, src, i * 4, LE).convert(I2F, 0).intoMemorySegment(dst, i * 4, LE);
        }
        return end;
    }

    private static long u32ToF32(MemorySegment src, MemorySegment dst, long n) {
        long end = bound(n, N);
        for (long i = 0; i < end; i += N) {
            IntVector v = IntVector.fromMemorySegment(IS, src, i * 4, LE);
            // hi * 65536 is exact, so the one float add is the only rounding: correctly rounded.
            FloatVector hi = (FloatVector) v.lanewise(LSHR, 16).convert(I2F, 0);
            FloatVector lo = (FloatVector) v.and(0xFFFF).convert(I2F, 0);
            hi.mul(65536.0f).add(lo).intoMemorySegment(dst, i * 4, LE);
        }
        return end;
    }

    private static long i64ToF32(MemorySegment src, MemorySegment dst, long n, boolean unsigned) {
        long end = bound(n, NH);
        for (long i = 0; i < end; i += NH) {
            LongVector v = LongVector.fromMemorySegment(LS, src, i * 8, LE);
            FloatVector f;
            if (unsigned) {
                // As ScalarKernels.u64ToF32: halve (keeping a sticky bit) where the top bit is set.
                VectorMask<Long> big = v.compare(LT, 0L);
                LongVector w = v.blend(v.lanewise(LSHR, 1).or(v.and(1L)), big);
                f = (FloatVector) w.convertShape(L2F, FH, 0);
                f = f.blend(f.mul(2.0f), big.cast(FH));
            } else {
                f = (FloatVector) v.convertShape(L2F, FH, 0);
            }
            f.intoMemorySegment(dst, i * 4, LE);
        }
        return end;
    }

    private static long f64ToF32(MemorySegment src, MemorySegment dst, long n) {
        long end = bound(n, NH);
        for (long i = 0; i < end; i += NH) {
            DoubleVector d = DoubleVector.fromMemorySegment(DS, src, i * 8, LE);
            IntVector f = ((FloatVector) d.convertShape(D2F, FH, 0)).reinterpretAsInts();
            // NaN lanes get the rule spelled out rather than whatever the conversion instruction does.
            LongVector b = d.reinterpretAsLongs();
            VectorMask<Long> nan = b.and(0x7FFFFFFFFFFFFFFFL).compare(GT, 0x7FF0000000000000L);
            if (nan.anyTrue()) {
                LongVector q = b.lanewise(LSHR, 32).and(0x80000000L)
                        .or(0x7FC00000L)
                        .or(b.lanewise(LSHR, 29).and(0x3FFFFFL));
                f = f.blend((IntVector) q.convertShape(L2I, IH, 0), nan.cast(IH));
            }
            f.intoMemorySegment(dst, i * 4, LE);
        }
        return end;
    }
}
