package io.github.semyonsinchenko.safetensors.kernels;

import static io.github.semyonsinchenko.safetensors.kernels.Arguments.elements;
import static io.github.semyonsinchenko.safetensors.kernels.Arguments.floatsFrom;
import static io.github.semyonsinchenko.safetensors.kernels.Arguments.requireArrays;
import static io.github.semyonsinchenko.safetensors.kernels.Arguments.requireLittleEndian;
import static io.github.semyonsinchenko.safetensors.kernels.Arguments.slice;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException;
import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * The one entry point to the dtype-conversion and gather kernels.
 *
 * <h2>Calls</h2>
 *
 * <ul>
 *   <li>{@link #convert(Conversion, MemorySegment, MemorySegment, long)}: {@code count} elements
 *       from the start of {@code src} to the start of {@code dst} (slice the segments to start
 *       elsewhere). Typed array overloads take an offset and a count in elements of the array.
 *   <li>{@link #gather(MemorySegment, long, MemorySegment, IndexType, MemorySegment)}: rows of
 *       {@code rowBytes} bytes picked from {@code table} by index, packed into {@code dst}.
 *   <li>{@link #gatherConvert(Conversion, MemorySegment, long, MemorySegment, IndexType,
 *       MemorySegment)}: the same for rows of F16 or BF16 values, written as F32.
 *   <li>Both gathers also take an {@link Executor} and a parallelism, to split one large gather
 *       over several threads; without them a call runs on the calling thread only.
 * </ul>
 *
 * <p>Segments may be read-only mmap slices, heap segments or native memory, at any alignment.
 * Source data is little-endian, as in a safetensors file. The rounding and NaN rules are those of
 * {@link Conversion}, and every path gives the same bits.
 *
 * <h2>Checks</h2>
 *
 * Every size, offset and gather index is checked here, before any path runs, so a bad argument
 * is an exception naming it, never a crash in native code: a negative count or a byte length
 * that is not a whole number of elements is an {@link IllegalArgumentException}; a source or
 * destination too short for the count, an array range outside its array, or a gather index
 * outside {@code [0, rows)} is an {@link IndexOutOfBoundsException}. A read-only destination, or
 * one that overlaps a source, is an {@link IllegalArgumentException}. Nothing is written when a
 * check fails.
 *
 * <h2>Concurrent changes and faults</h2>
 *
 * Every path loads each gather index once, checks it and uses that value, so another thread
 * writing the indices during a call can make rows wrong but never makes a kernel read outside the
 * table; an index it made bad is an {@link IndexOutOfBoundsException} saying so (rows before it may
 * be written then). Memory that faults during a call, almost always a mapped file truncated by
 * another process, is a {@link MappedFileFaultException} naming the file and the tensor when the
 * memory is registered with {@link MappedFiles} (as {@code SafetensorsFile} does), on every path:
 * the native library turns the fault into a status (see {@code native/README.md}), the Java paths
 * the JDK's {@link InternalError}. The argument checks and the path selection live in
 * {@code Arguments} and {@code PathSelection}; this class only strings them together.
 *
 * <h2>Paths</h2>
 *
 * On first use one path is chosen for the JVM, in this order: the native library shipped in the
 * jar ({@link Implementation#NATIVE}), the Vector API when the JVM runs with
 * {@code --add-modules=jdk.incubator.vector} ({@link Implementation#VECTOR}), else plain Java
 * ({@link Implementation#SCALAR}). The choice is logged once (System.Logger
 * {@code io.github.semyonsinchenko.safetensors.kernels}: DEBUG when the native path is chosen by
 * default, INFO for a fallback or a forced path, WARNING when a library exists but cannot load or a
 * forced path cannot run). The system property
 * {@code -Dsafetensors.kernels=native|vector|scalar} forces a path; when the forced path cannot
 * run, every call throws an {@link IllegalStateException} saying why (there is no silent
 * fallback). {@code -Dsafetensors.native.library=<file>} loads that library file instead of the
 * packaged one.
 *
 * <p>Thread-safe: the kernels keep no state. The heap-array overloads need a little-endian JVM
 * (every platform the native library is built for is); elsewhere they throw
 * {@link UnsupportedOperationException}.
 */
public final class Kernels {
    /** The system property that forces a path: {@code native}, {@code vector}, {@code scalar} (or {@code auto}). */
    public static final String PATH_PROPERTY = "safetensors.kernels";

    private Kernels() {}

    // ------------------------------------------------------------------ diagnostics

    /**
     * The path every call of this JVM runs.
     *
     * @return the path chosen on first use
     * @throws IllegalStateException if {@code -Dsafetensors.kernels} forces a path that cannot run
     */
    public static Implementation implementation() {
        return backend().implementation();
    }

    /** {@return one line on the chosen path, e.g. {@code NATIVE (isa avx512, libsafetensors_native 0.1.0)}} */
    public static String description() {
        return backend().describe();
    }

    /** {@return the native library's version, or empty when it is not loaded} */
    public static Optional<String> nativeVersion() {
        return NativeLibrary.INSTANCE.map(lib -> lib.version);
    }

    /**
     * {@return the native instruction-set level ("avx512bf16", "avx512", "avx2", "scalar"), or empty
     * without the library}
     */
    public static Optional<String> nativeIsa() {
        return NativeLibrary.INSTANCE.map(NativeLibrary::isaName);
    }

    /** {@return the file the native library was loaded from (a temporary copy of the packaged one), or empty} */
    public static Optional<Path> nativeLibraryPath() {
        return NativeLibrary.INSTANCE.map(lib -> lib.file);
    }

    /** {@return why the native library is not loaded, or empty when it is} */
    public static Optional<String> nativeUnavailableReason() {
        return Optional.ofNullable(NativeLibrary.FAILURE);
    }

    /**
     * Whether the native library's fault guard is on: a fault during a native call (a mapped file
     * truncated by another process) then becomes a {@link MappedFileFaultException} instead of
     * ending the JVM. False when this JVM runs another path than {@link Implementation#NATIVE}, with
     * {@code SAFETENSORS_NATIVE_FAULT_GUARD=0} in the environment at load, or after
     * {@link #nativeFaultGuard(boolean) nativeFaultGuard(false)}.
     *
     * @return whether faults in native calls are caught
     * @throws IllegalStateException as {@link #implementation()}
     */
    public static boolean nativeFaultGuardActive() {
        return implementation() == Implementation.NATIVE && NativeBackend.faultGuardActive();
    }

    /**
     * Switches the native fault guard on or off for the native calls that start afterwards, in every
     * thread, and returns {@link #nativeFaultGuardActive()}. Off, a fault on a mapped file ends the
     * JVM, as before the guard existed: the switch is there to measure the guard's cost inside one
     * JVM, everything else unchanged ({@code bench/run-kernels.sh} does). It can be switched on only
     * where the library installed its signal handler at load, and only on the native path.
     *
     * @param on true to catch faults, false to let them end the JVM
     * @return whether the guard is now on
     * @throws IllegalStateException as {@link #implementation()}
     */
    public static boolean nativeFaultGuard(boolean on) {
        return implementation() == Implementation.NATIVE && NativeBackend.enableFaultGuard(on);
    }

    // ------------------------------------------------------------------ conversions on segments

    /**
     * Converts {@code count} elements from the start of {@code src} to the start of {@code dst}.
     * Bytes of {@code dst} past {@code count * c.targetBytes()} are not touched.
     *
     * @param c the conversion
     * @param src the source elements, little-endian
     * @param dst where the converted elements go; writable, not overlapping {@code src}
     * @param count how many elements, at least 0
     * @throws IllegalArgumentException if {@code count} is negative, {@code dst} is read-only or
     *     overlaps the bytes read from {@code src}
     * @throws IndexOutOfBoundsException if {@code src} or {@code dst} is too short for {@code count}
     */
    public static void convert(Conversion c, MemorySegment src, MemorySegment dst, long count) {
        convert(backend(), c, src, dst, count);
    }

    /**
     * Converts all of {@code src}, which must be a whole number of source elements, and returns
     * the element count.
     *
     * @param c the conversion
     * @param src all the source elements, little-endian
     * @param dst where the converted elements go; writable, not overlapping {@code src}
     * @return the number of elements converted
     * @throws IllegalArgumentException if {@code src.byteSize()} is not a multiple of
     *     {@code c.sourceBytes()}, or as {@link #convert(Conversion, MemorySegment, MemorySegment, long)}
     */
    public static long convert(Conversion c, MemorySegment src, MemorySegment dst) {
        Objects.requireNonNull(c, "conversion");
        Objects.requireNonNull(src, "src");
        long count = elements(src.byteSize(), c.sourceBytes(), "src", c.source().name());
        convert(backend(), c, src, dst, count);
        return count;
    }

    static void convert(Backend b, Conversion c, MemorySegment src, MemorySegment dst, long count) {
        b.ensureUsable();
        Arguments.Convert a = Arguments.convert(c, src, dst, count);
        if (a == null) {
            return;
        }
        // Conversions without a native kernel run on the Java path whichever path was chosen.
        Backend run = c.hasNativeKernel() ? b : ScalarBackend.INSTANCE;
        try {
            run.convert(c, a.src(), a.dst(), count);
            run.afterCall();
        } catch (NativeBackend.Fault | InternalError e) {
            throw fault(e, "Kernels.convert(" + c + ")", "src", a.src(), "dst", a.dst());
        }
    }

    // ------------------------------------------------------------------ conversions by dtype

    /** Elements converted per step when a conversion to F64 goes through F32. */
    private static final int STAGE_ELEMENTS = 8192;

    /**
     * Whether {@link #convert(Dtype, Dtype, MemorySegment, MemorySegment, long)} converts {@code from}
     * to {@code to}: the same dtype (a copy), a single {@link Conversion}, or F64 from a dtype that
     * widens to F32 exactly (F16, BF16, the F8 formats, I8, U8, I16, U16).
     *
     * @param from the dtype read
     * @param to the dtype written
     * @return whether the pair is supported
     */
    public static boolean canConvert(Dtype from, Dtype to) {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        return from == to || Conversion.of(from, to).isPresent()
                || to == Dtype.F64 && Conversion.exactToF32(from).isPresent();
    }


    /**
     * Converts {@code count} elements of dtype {@code from} at the start of {@code src} to {@code to}
     * at the start of {@code dst}, by the rules of {@link Conversion}: a copy when the dtypes are
     * equal (any dtype, sub-byte ones included), the one kernel {@link Conversion#of(Dtype, Dtype)}
     * when there is one, and for F64 from a dtype that widens to F32 exactly, that widening and then
     * {@link Conversion#F32_TO_F64} (both exact) through a small buffer.
     *
     * @param from the dtype read
     * @param to the dtype written
     * @param src the elements read, from its first byte
     * @param dst where the converted elements go, from its first byte
     * @param count how many elements
     * @throws UnsupportedOperationException if {@link #canConvert} is false for the pair
     * @throws IllegalArgumentException if {@code count} is negative, {@code dst} is read-only or overlaps {@code src}
     * @throws IndexOutOfBoundsException if {@code src} or {@code dst} is too short for {@code count}
     */
    public static void convert(Dtype from, Dtype to, MemorySegment src, MemorySegment dst, long count) {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        if (!canConvert(from, to)) {
            throw new UnsupportedOperationException(String.format(Locale.ROOT, "no kernel converts %s to %s (see"
                    + " Kernels.canConvert)", from, to));
        }
        if (count < 0) {
            throw new IllegalArgumentException(from + " to " + to + ": count must not be negative, got " + count);
        }
        if (from == to) {
            long bytes = from.storageBytes(count);
            Arguments.requireBytes(src, bytes, "src", from + " copy", count);
            Arguments.requireBytes(dst, bytes, "dst", from + " copy", count);
            Arguments.requireWritable(dst, "dst");
            if (bytes == 0) {
                return;
            }
            Arguments.requireDisjoint(src.asSlice(0, bytes), "src", dst.asSlice(0, bytes));
            try {
                MemorySegment.copy(src, 0, dst, 0, bytes);
                MappedFiles.raisePendingFault();
            } catch (InternalError e) {
                throw fault(e, "Kernels.convert(" + from + " copy)", "src", src, "dst", dst);
            }
            return;
        }
        Conversion direct = Conversion.of(from, to).orElse(null);
        if (direct != null) {
            convert(direct, src, dst, count);
            return;
        }
        Conversion widen = Conversion.toF32(from).orElseThrow();
        Arguments.requireBytes(src, Arguments.bytes(count, widen.sourceBytes(), "count"), "src", widen, count);
        Arguments.requireBytes(dst, Arguments.bytes(count, 8, "count"), "dst", Conversion.F32_TO_F64, count);
        MemorySegment stage = MemorySegment.ofArray(new float[(int) Math.min(count, STAGE_ELEMENTS)]);
        for (long i = 0; i < count; i += STAGE_ELEMENTS) {
            long m = Math.min(STAGE_ELEMENTS, count - i);
            convert(widen, src.asSlice(i * widen.sourceBytes(), m * widen.sourceBytes()), stage, m);
            convert(Conversion.F32_TO_F64, stage, dst.asSlice(i * 8, m * 8), m);
        }
    }

    // ------------------------------------------------------------------ conversions on heap arrays

    /**
     * {@link Conversion#BF16_TO_F32}, {@link Conversion#F16_TO_F32}, {@link Conversion#I16_TO_F32}
     * or {@link Conversion#U16_TO_F32} of {@code src[srcOffset, srcOffset + count)} into
     * {@code dst[dstOffset, dstOffset + count)}; {@code short}s carry the raw 16 bits.
     *
     * @param c the conversion; its source and target must be the arrays' element types
     * @param src the source array
     * @param srcOffset the first element read
     * @param dst the destination array
     * @param dstOffset the first element written
     * @param count how many elements
     * @throws IllegalArgumentException if {@code c} reads or writes other array types
     * @throws IndexOutOfBoundsException if a range lies outside its array
     */
    public static void convert(Conversion c, short[] src, int srcOffset, float[] dst, int dstOffset, int count) {
        requireArrays(c, short.class, float.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 2, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 4, dstOffset, count, "dst"), count);
    }

    /**
     * F32 to BF16 or F16 ({@code _RNE} or {@code _TRUNC}); {@code short}s receive the raw 16 bits.
     *
     * @param c the conversion; its source and target must be the arrays' element types
     * @param src the source array
     * @param srcOffset the first element read
     * @param dst the destination array
     * @param dstOffset the first element written
     * @param count how many elements
     * @throws IllegalArgumentException if {@code c} reads or writes other array types
     * @throws IndexOutOfBoundsException if a range lies outside its array
     */
    public static void convert(Conversion c, float[] src, int srcOffset, short[] dst, int dstOffset, int count) {
        requireArrays(c, float.class, short.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 4, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 2, dstOffset, count, "dst"), count);
    }

    /**
     * {@link Conversion#F16_TO_BF16} or {@link Conversion#BF16_TO_F16}; {@code src} and {@code dst} must not overlap.
     *
     * @param c the conversion; its source and target must be the arrays' element types
     * @param src the source array
     * @param srcOffset the first element read
     * @param dst the destination array
     * @param dstOffset the first element written
     * @param count how many elements
     * @throws IllegalArgumentException if {@code c} reads or writes other array types
     * @throws IndexOutOfBoundsException if a range lies outside its array
     */
    public static void convert(Conversion c, short[] src, int srcOffset, short[] dst, int dstOffset, int count) {
        requireArrays(c, short.class, short.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 2, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 2, dstOffset, count, "dst"), count);
    }

    /**
     * {@link Conversion#I8_TO_F32}, {@link Conversion#U8_TO_F32} or one of the F8 formats to F32.
     *
     * @param c the conversion; its source and target must be the arrays' element types
     * @param src the source array
     * @param srcOffset the first element read
     * @param dst the destination array
     * @param dstOffset the first element written
     * @param count how many elements
     * @throws IllegalArgumentException if {@code c} reads or writes other array types
     * @throws IndexOutOfBoundsException if a range lies outside its array
     */
    public static void convert(Conversion c, byte[] src, int srcOffset, float[] dst, int dstOffset, int count) {
        requireArrays(c, byte.class, float.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 1, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 4, dstOffset, count, "dst"), count);
    }

    /**
     * {@link Conversion#I32_TO_F32} or {@link Conversion#U32_TO_F32} (the {@code int}s read as unsigned).
     *
     * @param c the conversion; its source and target must be the arrays' element types
     * @param src the source array
     * @param srcOffset the first element read
     * @param dst the destination array
     * @param dstOffset the first element written
     * @param count how many elements
     * @throws IllegalArgumentException if {@code c} reads or writes other array types
     * @throws IndexOutOfBoundsException if a range lies outside its array
     */
    public static void convert(Conversion c, int[] src, int srcOffset, float[] dst, int dstOffset, int count) {
        requireArrays(c, int.class, float.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 4, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 4, dstOffset, count, "dst"), count);
    }

    /**
     * {@link Conversion#I64_TO_F32} or {@link Conversion#U64_TO_F32} (the {@code long}s read as unsigned).
     *
     * @param c the conversion; its source and target must be the arrays' element types
     * @param src the source array
     * @param srcOffset the first element read
     * @param dst the destination array
     * @param dstOffset the first element written
     * @param count how many elements
     * @throws IllegalArgumentException if {@code c} reads or writes other array types
     * @throws IndexOutOfBoundsException if a range lies outside its array
     */
    public static void convert(Conversion c, long[] src, int srcOffset, float[] dst, int dstOffset, int count) {
        requireArrays(c, long.class, float.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 8, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 4, dstOffset, count, "dst"), count);
    }

    /**
     * {@link Conversion#F64_TO_F32}.
     *
     * @param c the conversion; its source and target must be the arrays' element types
     * @param src the source array
     * @param srcOffset the first element read
     * @param dst the destination array
     * @param dstOffset the first element written
     * @param count how many elements
     * @throws IllegalArgumentException if {@code c} reads or writes other array types
     * @throws IndexOutOfBoundsException if a range lies outside its array
     */
    public static void convert(Conversion c, double[] src, int srcOffset, float[] dst, int dstOffset, int count) {
        requireArrays(c, double.class, float.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 8, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 4, dstOffset, count, "dst"), count);
    }

    /**
     * {@link Conversion#F32_TO_F64}.
     *
     * @param c the conversion
     * @param src the source array
     * @param srcOffset the first element read
     * @param dst the destination array
     * @param dstOffset the first element written
     * @param count how many elements
     */
    public static void convert(Conversion c, float[] src, int srcOffset, double[] dst, int dstOffset, int count) {
        requireArrays(c, float.class, double.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 4, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 8, dstOffset, count, "dst"), count);
    }

    /**
     * {@link Conversion#I32_TO_F64} or {@link Conversion#U32_TO_F64} (the {@code int}s read as unsigned).
     *
     * @param c the conversion
     * @param src the source array
     * @param srcOffset the first element read
     * @param dst the destination array
     * @param dstOffset the first element written
     * @param count how many elements
     */
    public static void convert(Conversion c, int[] src, int srcOffset, double[] dst, int dstOffset, int count) {
        requireArrays(c, int.class, double.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 4, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 8, dstOffset, count, "dst"), count);
    }

    /**
     * {@link Conversion#I64_TO_F64} or {@link Conversion#U64_TO_F64} (the {@code long}s read as unsigned).
     *
     * @param c the conversion
     * @param src the source array
     * @param srcOffset the first element read
     * @param dst the destination array
     * @param dstOffset the first element written
     * @param count how many elements
     */
    public static void convert(Conversion c, long[] src, int srcOffset, double[] dst, int dstOffset, int count) {
        requireArrays(c, long.class, double.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 8, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 8, dstOffset, count, "dst"), count);
    }

    // ------------------------------------------------------------------ one element

    /**
     * Converts one element given by its raw bits, for callers that meet elements one at a time
     * (a value already in a register, a generic Spark array): the bits {@link #convert} writes for
     * that element, on every path. The source bits are the low bits of {@code sourceBits} (16 for
     * F16/BF16/I16/U16, 32 for F32/I32/U32, 8 for I8/U8 and the F8 formats, all 64 for I64/U64/F64);
     * the result is the target's bits, zero-extended (16 bits for F16/BF16, 32 for F32, all 64 for F64). Plain Java on the scalar
     * definition of every conversion: no native call, no argument segment, no allocation.
     *
     * @param c the conversion
     * @param sourceBits the element's bits, in the low bits
     * @return the converted element's bits, zero-extended
     */
    public static long convertBits(Conversion c, long sourceBits) {
        int i = (int) sourceBits;
        short h = (short) sourceBits;
        return switch (c) {
            case BF16_TO_F32 -> Integer.toUnsignedLong(ScalarKernels.bf16ToF32(h));
            case F32_TO_BF16_RNE -> ScalarKernels.f32ToBf16Rne(i) & 0xFFFFL;
            case F32_TO_BF16_TRUNC -> ScalarKernels.f32ToBf16Trunc(i) & 0xFFFFL;
            case F16_TO_F32 -> Integer.toUnsignedLong(ScalarKernels.f16ToF32(h));
            case F32_TO_F16_RNE -> ScalarKernels.f32ToF16Rne(i) & 0xFFFFL;
            case F32_TO_F16_TRUNC -> ScalarKernels.f32ToF16Trunc(i) & 0xFFFFL;
            case F16_TO_BF16 -> ScalarKernels.f16ToBf16(h) & 0xFFFFL;
            case BF16_TO_F16 -> ScalarKernels.bf16ToF16(h) & 0xFFFFL;
            case I8_TO_F32 -> floatBits((byte) sourceBits);
            case U8_TO_F32 -> floatBits(sourceBits & 0xFF);
            case I16_TO_F32 -> floatBits(h);
            case U16_TO_F32 -> floatBits(sourceBits & 0xFFFF);
            case I32_TO_F32 -> floatBits((float) i);
            case U32_TO_F32 -> floatBits(ScalarKernels.u32ToF32(i));
            case I64_TO_F32 -> floatBits((float) sourceBits);
            case U64_TO_F32 -> floatBits(ScalarKernels.u64ToF32(sourceBits));
            case F64_TO_F32 -> Integer.toUnsignedLong(ScalarKernels.f64ToF32(sourceBits));
            case F8_E4M3_TO_F32 -> Integer.toUnsignedLong(ScalarKernels.F8_E4M3[(int) sourceBits & 0xFF]);
            case F8_E5M2_TO_F32 -> Integer.toUnsignedLong(ScalarKernels.F8_E5M2[(int) sourceBits & 0xFF]);
            case F8_E8M0_TO_F32 -> Integer.toUnsignedLong(ScalarKernels.F8_E8M0[(int) sourceBits & 0xFF]);
            case F8_E4M3FNUZ_TO_F32 -> Integer.toUnsignedLong(ScalarKernels.F8_E4M3FNUZ[(int) sourceBits & 0xFF]);
            case F8_E5M2FNUZ_TO_F32 -> Integer.toUnsignedLong(ScalarKernels.F8_E5M2FNUZ[(int) sourceBits & 0xFF]);
            case F32_TO_F64 -> ScalarKernels.f32ToF64(i);
            case I32_TO_F64 -> Double.doubleToRawLongBits(i);
            case U32_TO_F64 -> Double.doubleToRawLongBits(Integer.toUnsignedLong(i));
            case I64_TO_F64 -> Double.doubleToRawLongBits((double) sourceBits);
            case U64_TO_F64 -> Double.doubleToRawLongBits(ScalarKernels.u64ToF64(sourceBits));
        };
    }

    /** The bits of a float that is never NaN (integer sources), zero-extended. */
    private static long floatBits(float f) {
        return Integer.toUnsignedLong(Float.floatToRawIntBits(f));
    }

    // ------------------------------------------------------------------ gathers

    /**
     * For each index {@code i} of {@code indices}: copies row {@code indices[i]} of {@code table}
     * ({@code rowBytes} bytes at {@code indices[i] * rowBytes}) to {@code dst} at
     * {@code i * rowBytes}. {@code table} must be a whole number of rows; its row count bounds the
     * indices. Bytes of {@code dst} past the last row are not touched.
     *
     * @param table the rows, a whole number of {@code rowBytes}
     * @param rowBytes bytes per row, positive
     * @param indices the row numbers, little-endian
     * @param indexType the indices' element type
     * @param dst where the rows go, packed; writable
     * @throws IllegalArgumentException if {@code rowBytes <= 0}, {@code table} is not a whole number
     *     of rows, {@code indices} not a whole number of indices, {@code dst} is read-only or
     *     overlaps {@code table} or {@code indices}
     * @throws IndexOutOfBoundsException if an index is outside {@code [0, rows)} or {@code dst} is
     *     shorter than {@code indices count * rowBytes}; {@code dst} is then untouched
     */
    public static void gather(MemorySegment table, long rowBytes, MemorySegment indices, IndexType indexType,
            MemorySegment dst) {
        gather(backend(), table, rowBytes, indices, indexType, dst);
    }

    /**
     * {@link #gather(MemorySegment, long, MemorySegment, IndexType, MemorySegment)} with unsigned
     * 32-bit indices {@code indices[from, from + count)}.
     *
     * @param table the rows, a whole number of {@code rowBytes}
     * @param rowBytes bytes per row, positive
     * @param indices the row numbers, read as unsigned
     * @param from the first index used
     * @param count how many indices
     * @param dst where the rows go, packed; writable
     * @throws IndexOutOfBoundsException if {@code [from, from + count)} lies outside {@code indices},
     *     and as the segment form
     */
    public static void gather(MemorySegment table, long rowBytes, int[] indices, int from, int count, MemorySegment dst) {
        requireLittleEndian();
        gather(backend(), table, rowBytes, slice(MemorySegment.ofArray(indices), indices.length, 4, from, count,
                "indices"), IndexType.U32, dst);
    }

    /**
     * {@link #gather(MemorySegment, long, MemorySegment, IndexType, MemorySegment)} with signed
     * 64-bit indices {@code indices[from, from + count)}.
     *
     * @param table the rows, a whole number of {@code rowBytes}
     * @param rowBytes bytes per row, positive
     * @param indices the row numbers; a negative one is out of range
     * @param from the first index used
     * @param count how many indices
     * @param dst where the rows go, packed; writable
     * @throws IndexOutOfBoundsException if {@code [from, from + count)} lies outside {@code indices},
     *     and as the segment form
     */
    public static void gather(MemorySegment table, long rowBytes, long[] indices, int from, int count,
            MemorySegment dst) {
        requireLittleEndian();
        gather(backend(), table, rowBytes, slice(MemorySegment.ofArray(indices), indices.length, 8, from, count,
                "indices"), IndexType.I64, dst);
    }

    /**
     * {@link #gather(MemorySegment, long, MemorySegment, IndexType, MemorySegment)} split over up to
     * {@code parallelism} threads: the indices are cut into contiguous ranges of at least 256 KiB of
     * output each, the calling thread gathers the first range and {@code executor} the others, each
     * range into its own part of {@code dst}. Every index is still checked before any row is written
     * and read once by the kernel. The call returns or throws only after every range has ended;
     * an error from any range is the same exception the single-threaded call throws (the lowest
     * range's, with the others suppressed). A range the executor rejects runs on the calling thread.
     * The segments must be accessible from other threads (not of a confined arena). Because the
     * call waits for its ranges, do not pass the pool the calling thread itself runs on when that
     * pool may be fully busy: the ranges would wait for a free thread that never comes.
     *
     * <p>The plain overloads stay single-threaded on purpose: callers that already run many gathers
     * at once (a sampler's workers, Spark tasks) would only oversubscribe the cores if every call
     * also fanned out. Use this form for one large gather on otherwise idle cores.
     *
     * @param table the rows, a whole number of {@code rowBytes}
     * @param rowBytes bytes per row, positive
     * @param indices the row numbers, little-endian
     * @param indexType the indices' element type
     * @param dst where the rows go, packed; writable
     * @param executor runs the ranges other than the first; may be null when {@code parallelism} is 1
     * @param parallelism the most threads used, the calling one included; at least 1
     * @throws IllegalArgumentException if {@code parallelism < 1}, if {@code parallelism > 1} and a
     *     segment belongs to a confined arena, and as the single-threaded form
     * @throws NullPointerException if {@code parallelism > 1} and {@code executor} is null
     */
    public static void gather(MemorySegment table, long rowBytes, MemorySegment indices, IndexType indexType,
            MemorySegment dst, Executor executor, int parallelism) {
        gather(backend(), table, rowBytes, indices, indexType, dst, executor, parallelism);
    }

    static void gather(Backend b, MemorySegment table, long rowBytes, MemorySegment indices, IndexType indexType,
            MemorySegment dst) {
        gather(b, table, rowBytes, indices, indexType, dst, null, 1);
    }

    static void gather(Backend b, MemorySegment table, long rowBytes, MemorySegment indices, IndexType indexType,
            MemorySegment dst, Executor executor, int parallelism) {
        GatherSlices.requireParallelism(executor, parallelism, table, indices, dst);
        b.ensureUsable();
        Arguments.Gather a = Arguments.gather(table, rowBytes, indices, indexType, dst);
        if (a == null) {
            return;
        }
        int ib = indexType.bytes();
        GatherSlices.run(a.nIdx(), rowBytes, executor, parallelism, (from, n) -> {
            try {
                b.gather(table, a.nRows(), rowBytes, indices.asSlice(from * ib, n * ib), indexType, n,
                        a.dst().asSlice(from * rowBytes, n * rowBytes));
                b.afterCall();
            } catch (NativeBackend.Fault | InternalError e) {
                throw fault(e, "Kernels.gather", "table", table, "indices", indices, "dst", a.dst());
            }
        });
    }

    /**
     * Gathers rows of {@code rowElems} F16 or BF16 values ({@code c} is
     * {@link Conversion#F16_TO_F32} or {@link Conversion#BF16_TO_F32}) and writes them as F32:
     * {@code dst} gets {@code index count * rowElems} floats. Checks as
     * {@link #gather(MemorySegment, long, MemorySegment, IndexType, MemorySegment)}.
     *
     * @param c {@link Conversion#F16_TO_F32} or {@link Conversion#BF16_TO_F32}
     * @param table the rows, a whole number of {@code rowElems} 16-bit values
     * @param rowElems values per row, positive
     * @param indices the row numbers, little-endian
     * @param indexType the indices' element type
     * @param dst where the F32 rows go, packed; writable
     */
    public static void gatherConvert(Conversion c, MemorySegment table, long rowElems, MemorySegment indices,
            IndexType indexType, MemorySegment dst) {
        gatherConvert(backend(), c, table, rowElems, indices, indexType, dst);
    }

    /**
     * {@link #gatherConvert(Conversion, MemorySegment, long, MemorySegment, IndexType, MemorySegment)}
     * with unsigned 32-bit indices into a float array.
     *
     * @param c {@link Conversion#F16_TO_F32} or {@link Conversion#BF16_TO_F32}
     * @param table the rows, a whole number of {@code rowElems} 16-bit values
     * @param rowElems values per row, positive
     * @param indices the row numbers, read as unsigned
     * @param from the first index used
     * @param count how many indices
     * @param dst receives {@code count * rowElems} floats
     * @param dstOffset the first float written
     */
    public static void gatherConvert(Conversion c, MemorySegment table, long rowElems, int[] indices, int from,
            int count, float[] dst, int dstOffset) {
        requireLittleEndian();
        MemorySegment idx = slice(MemorySegment.ofArray(indices), indices.length, 4, from, count, "indices");
        gatherConvert(backend(), c, table, rowElems, idx, IndexType.U32, floatsFrom(dst, dstOffset));
    }

    /**
     * {@link #gatherConvert(Conversion, MemorySegment, long, MemorySegment, IndexType, MemorySegment)}
     * with signed 64-bit indices into a float array.
     *
     * @param c {@link Conversion#F16_TO_F32} or {@link Conversion#BF16_TO_F32}
     * @param table the rows, a whole number of {@code rowElems} 16-bit values
     * @param rowElems values per row, positive
     * @param indices the row numbers; a negative one is out of range
     * @param from the first index used
     * @param count how many indices
     * @param dst receives {@code count * rowElems} floats
     * @param dstOffset the first float written
     */
    public static void gatherConvert(Conversion c, MemorySegment table, long rowElems, long[] indices, int from,
            int count, float[] dst, int dstOffset) {
        requireLittleEndian();
        MemorySegment idx = slice(MemorySegment.ofArray(indices), indices.length, 8, from, count, "indices");
        gatherConvert(backend(), c, table, rowElems, idx, IndexType.I64, floatsFrom(dst, dstOffset));
    }

    /**
     * {@link #gatherConvert(Conversion, MemorySegment, long, MemorySegment, IndexType, MemorySegment)}
     * split over up to {@code parallelism} threads, as
     * {@link #gather(MemorySegment, long, MemorySegment, IndexType, MemorySegment, Executor, int)}.
     *
     * @param c {@link Conversion#F16_TO_F32} or {@link Conversion#BF16_TO_F32}
     * @param table the rows, a whole number of {@code rowElems} 16-bit values
     * @param rowElems values per row, positive
     * @param indices the row numbers, little-endian
     * @param indexType the indices' element type
     * @param dst where the F32 rows go, packed; writable
     * @param executor runs the ranges other than the first; may be null when {@code parallelism} is 1
     * @param parallelism the most threads used, the calling one included; at least 1
     */
    public static void gatherConvert(Conversion c, MemorySegment table, long rowElems, MemorySegment indices,
            IndexType indexType, MemorySegment dst, Executor executor, int parallelism) {
        gatherConvert(backend(), c, table, rowElems, indices, indexType, dst, executor, parallelism);
    }

    static void gatherConvert(Backend b, Conversion c, MemorySegment table, long rowElems, MemorySegment indices,
            IndexType indexType, MemorySegment dst) {
        gatherConvert(b, c, table, rowElems, indices, indexType, dst, null, 1);
    }

    static void gatherConvert(Backend b, Conversion c, MemorySegment table, long rowElems, MemorySegment indices,
            IndexType indexType, MemorySegment dst, Executor executor, int parallelism) {
        GatherSlices.requireParallelism(executor, parallelism, table, indices, dst);
        b.ensureUsable();
        Arguments.Gather a = Arguments.gatherConvert(c, table, rowElems, indices, indexType, dst);
        if (a == null) {
            return;
        }
        int ib = indexType.bytes();
        long dstRow = rowElems * 4;
        GatherSlices.run(a.nIdx(), dstRow, executor, parallelism, (from, n) -> {
            try {
                b.gatherConvert(c, table, a.nRows(), rowElems, indices.asSlice(from * ib, n * ib), indexType, n,
                        a.dst().asSlice(from * dstRow, n * dstRow));
                b.afterCall();
            } catch (NativeBackend.Fault | InternalError e) {
                throw fault(e, "Kernels.gatherConvert(" + c + ")", "table", table, "indices", indices, "dst",
                        a.dst());
            }
        });
    }

    /**
     * A memory fault (native status ST_ERR_FAULT, or the JDK's InternalError for a fault in a Java
     * path) as a {@link MappedFileFaultException} naming the file; any other InternalError unchanged.
     */
    private static RuntimeException fault(Throwable e, String call, Object... args) {
        if (e instanceof NativeBackend.Fault f) {
            return MappedFiles.fault(call, f.address, null, args);
        }
        if (MappedFiles.isMemoryFault(e)) {
            return MappedFiles.fault(call, 0, e, args);
        }
        throw (InternalError) e;
    }

    /** The chosen path; selected (and logged) on first use. */
    static Backend backend() {
        return PathSelection.backend();
    }
}
