package io.github.semyonsinchenko.safetensors.kernels;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

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

    private static final System.Logger LOG = System.getLogger("io.github.semyonsinchenko.safetensors.kernels");
    private static final String VECTOR_MODULE = "jdk.incubator.vector";
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private Kernels() {}

    // ------------------------------------------------------------------ diagnostics

    /**
     * The path every call of this JVM runs.
     *
     * @throws IllegalStateException if {@code -Dsafetensors.kernels} forces a path that cannot run
     */
    public static Implementation implementation() {
        return backend().implementation();
    }

    /** One line on the chosen path, e.g. {@code NATIVE (isa avx512, libsafetensors_native 0.1.0)}. */
    public static String description() {
        return backend().describe();
    }

    /** The native library's version, or empty when it is not loaded. */
    public static Optional<String> nativeVersion() {
        return NativeLibrary.INSTANCE.map(lib -> lib.version);
    }

    /** The native instruction-set level ("avx512", "avx2", "scalar"), or empty without the library. */
    public static Optional<String> nativeIsa() {
        return NativeLibrary.INSTANCE.map(NativeLibrary::isaName);
    }

    /** The file the native library was loaded from (a temporary copy of the packaged one), or empty. */
    public static Optional<Path> nativeLibraryPath() {
        return NativeLibrary.INSTANCE.map(lib -> lib.file);
    }

    /** Why the native library is not loaded, or empty when it is. */
    public static Optional<String> nativeUnavailableReason() {
        return Optional.ofNullable(NativeLibrary.FAILURE);
    }

    // ------------------------------------------------------------------ conversions on segments

    /**
     * Converts {@code count} elements from the start of {@code src} to the start of {@code dst}.
     * Bytes of {@code dst} past {@code count * c.targetBytes()} are not touched.
     *
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
        Objects.requireNonNull(c, "conversion");
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        if (count < 0) {
            throw new IllegalArgumentException(c + ": count must not be negative, got " + count);
        }
        long srcBytes = bytes(count, c.sourceBytes(), c + ": count");
        long dstBytes = bytes(count, c.targetBytes(), c + ": count");
        requireSize(src, srcBytes, "src", c, count);
        requireSize(dst, dstBytes, "dst", c, count);
        requireWritable(dst, "dst");
        if (count == 0) {
            return;
        }
        MemorySegment s = src.asSlice(0, srcBytes);
        MemorySegment d = dst.asSlice(0, dstBytes);
        requireDisjoint(s, "src", d);
        b.convert(c, s, d, count);
    }

    // ------------------------------------------------------------------ conversions on heap arrays

    /**
     * {@link Conversion#BF16_TO_F32}, {@link Conversion#F16_TO_F32}, {@link Conversion#I16_TO_F32}
     * or {@link Conversion#U16_TO_F32} of {@code src[srcOffset, srcOffset + count)} into
     * {@code dst[dstOffset, dstOffset + count)}; {@code short}s carry the raw 16 bits.
     */
    public static void convert(Conversion c, short[] src, int srcOffset, float[] dst, int dstOffset, int count) {
        requireArrays(c, short.class, float.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 2, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 4, dstOffset, count, "dst"), count);
    }

    /** F32 to BF16 or F16 ({@code _RNE} or {@code _TRUNC}); {@code short}s receive the raw 16 bits. */
    public static void convert(Conversion c, float[] src, int srcOffset, short[] dst, int dstOffset, int count) {
        requireArrays(c, float.class, short.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 4, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 2, dstOffset, count, "dst"), count);
    }

    /** {@link Conversion#F16_TO_BF16} or {@link Conversion#BF16_TO_F16}; {@code src} and {@code dst} must not overlap. */
    public static void convert(Conversion c, short[] src, int srcOffset, short[] dst, int dstOffset, int count) {
        requireArrays(c, short.class, short.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 2, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 2, dstOffset, count, "dst"), count);
    }

    /** {@link Conversion#I8_TO_F32} or {@link Conversion#U8_TO_F32}. */
    public static void convert(Conversion c, byte[] src, int srcOffset, float[] dst, int dstOffset, int count) {
        requireArrays(c, byte.class, float.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 1, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 4, dstOffset, count, "dst"), count);
    }

    /** {@link Conversion#I32_TO_F32} or {@link Conversion#U32_TO_F32} (the {@code int}s read as unsigned). */
    public static void convert(Conversion c, int[] src, int srcOffset, float[] dst, int dstOffset, int count) {
        requireArrays(c, int.class, float.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 4, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 4, dstOffset, count, "dst"), count);
    }

    /** {@link Conversion#I64_TO_F32} or {@link Conversion#U64_TO_F32} (the {@code long}s read as unsigned). */
    public static void convert(Conversion c, long[] src, int srcOffset, float[] dst, int dstOffset, int count) {
        requireArrays(c, long.class, float.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 8, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 4, dstOffset, count, "dst"), count);
    }

    /** {@link Conversion#F64_TO_F32}. */
    public static void convert(Conversion c, double[] src, int srcOffset, float[] dst, int dstOffset, int count) {
        requireArrays(c, double.class, float.class);
        convert(backend(), c, slice(MemorySegment.ofArray(src), src.length, 8, srcOffset, count, "src"),
                slice(MemorySegment.ofArray(dst), dst.length, 4, dstOffset, count, "dst"), count);
    }

    // ------------------------------------------------------------------ gathers

    /**
     * For each index {@code i} of {@code indices}: copies row {@code indices[i]} of {@code table}
     * ({@code rowBytes} bytes at {@code indices[i] * rowBytes}) to {@code dst} at
     * {@code i * rowBytes}. {@code table} must be a whole number of rows; its row count bounds the
     * indices. Bytes of {@code dst} past the last row are not touched.
     *
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

    /** {@link #gather(MemorySegment, long, MemorySegment, IndexType, MemorySegment)} with unsigned 32-bit indices {@code indices[from, from + count)}. */
    public static void gather(MemorySegment table, long rowBytes, int[] indices, int from, int count, MemorySegment dst) {
        requireLittleEndian();
        gather(backend(), table, rowBytes, slice(MemorySegment.ofArray(indices), indices.length, 4, from, count,
                "indices"), IndexType.U32, dst);
    }

    /** {@link #gather(MemorySegment, long, MemorySegment, IndexType, MemorySegment)} with signed 64-bit indices {@code indices[from, from + count)}. */
    public static void gather(MemorySegment table, long rowBytes, long[] indices, int from, int count,
            MemorySegment dst) {
        requireLittleEndian();
        gather(backend(), table, rowBytes, slice(MemorySegment.ofArray(indices), indices.length, 8, from, count,
                "indices"), IndexType.I64, dst);
    }

    static void gather(Backend b, MemorySegment table, long rowBytes, MemorySegment indices, IndexType indexType,
            MemorySegment dst) {
        b.ensureUsable();
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(indices, "indices");
        Objects.requireNonNull(indexType, "indexType");
        Objects.requireNonNull(dst, "dst");
        if (rowBytes <= 0) {
            throw new IllegalArgumentException("gather: rowBytes must be positive, got " + rowBytes);
        }
        if (table.byteSize() % rowBytes != 0) {
            throw new IllegalArgumentException("gather: table is " + table.byteSize()
                    + " bytes, not a whole number of rows of rowBytes=" + rowBytes);
        }
        long nRows = table.byteSize() / rowBytes;
        long nIdx = elements(indices.byteSize(), indexType.bytes(), "indices", indexType.name());
        long dstBytes = bytes(nIdx, rowBytes, "gather: rowBytes * index count");
        if (dst.byteSize() < dstBytes) {
            throw new IndexOutOfBoundsException("gather: dst is " + dst.byteSize() + " bytes; " + nIdx
                    + " rows of rowBytes=" + rowBytes + " need " + dstBytes);
        }
        requireWritable(dst, "dst");
        if (nIdx == 0) {
            return;
        }
        MemorySegment d = dst.asSlice(0, dstBytes);
        requireDisjoint(table, "table", d);
        requireDisjoint(indices, "indices", d);
        checkIndices(indices, indexType, nIdx, nRows);
        b.gather(table, nRows, rowBytes, indices, indexType, nIdx, d);
    }

    /**
     * Gathers rows of {@code rowElems} F16 or BF16 values ({@code c} is
     * {@link Conversion#F16_TO_F32} or {@link Conversion#BF16_TO_F32}) and writes them as F32:
     * {@code dst} gets {@code index count * rowElems} floats. Checks as
     * {@link #gather(MemorySegment, long, MemorySegment, IndexType, MemorySegment)}.
     */
    public static void gatherConvert(Conversion c, MemorySegment table, long rowElems, MemorySegment indices,
            IndexType indexType, MemorySegment dst) {
        gatherConvert(backend(), c, table, rowElems, indices, indexType, dst);
    }

    /** {@link #gatherConvert(Conversion, MemorySegment, long, MemorySegment, IndexType, MemorySegment)} with unsigned 32-bit indices into a float array. */
    public static void gatherConvert(Conversion c, MemorySegment table, long rowElems, int[] indices, int from,
            int count, float[] dst, int dstOffset) {
        requireLittleEndian();
        MemorySegment idx = slice(MemorySegment.ofArray(indices), indices.length, 4, from, count, "indices");
        gatherConvert(backend(), c, table, rowElems, idx, IndexType.U32, floatsFrom(dst, dstOffset));
    }

    /** {@link #gatherConvert(Conversion, MemorySegment, long, MemorySegment, IndexType, MemorySegment)} with signed 64-bit indices into a float array. */
    public static void gatherConvert(Conversion c, MemorySegment table, long rowElems, long[] indices, int from,
            int count, float[] dst, int dstOffset) {
        requireLittleEndian();
        MemorySegment idx = slice(MemorySegment.ofArray(indices), indices.length, 8, from, count, "indices");
        gatherConvert(backend(), c, table, rowElems, idx, IndexType.I64, floatsFrom(dst, dstOffset));
    }

    static void gatherConvert(Backend b, Conversion c, MemorySegment table, long rowElems, MemorySegment indices,
            IndexType indexType, MemorySegment dst) {
        b.ensureUsable();
        Objects.requireNonNull(c, "conversion");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(indices, "indices");
        Objects.requireNonNull(indexType, "indexType");
        Objects.requireNonNull(dst, "dst");
        if (c != Conversion.F16_TO_F32 && c != Conversion.BF16_TO_F32) {
            throw new IllegalArgumentException("gatherConvert: " + c + " has no gather kernel; use F16_TO_F32 or"
                    + " BF16_TO_F32");
        }
        if (rowElems <= 0) {
            throw new IllegalArgumentException("gatherConvert: rowElems must be positive, got " + rowElems);
        }
        long srcRow = bytes(rowElems, 2, "gatherConvert: rowElems");
        long dstRow = bytes(rowElems, 4, "gatherConvert: rowElems");
        if (table.byteSize() % srcRow != 0) {
            throw new IllegalArgumentException("gatherConvert: table is " + table.byteSize() + " bytes, not a whole"
                    + " number of rows of rowElems=" + rowElems + " " + c.source() + " values (" + srcRow + " bytes)");
        }
        long nRows = table.byteSize() / srcRow;
        long nIdx = elements(indices.byteSize(), indexType.bytes(), "indices", indexType.name());
        long dstBytes = bytes(nIdx, dstRow, "gatherConvert: rowElems * index count");
        if (dst.byteSize() < dstBytes) {
            throw new IndexOutOfBoundsException("gatherConvert: dst is " + dst.byteSize() + " bytes; " + nIdx
                    + " rows of rowElems=" + rowElems + " floats need " + dstBytes);
        }
        requireWritable(dst, "dst");
        if (nIdx == 0) {
            return;
        }
        MemorySegment d = dst.asSlice(0, dstBytes);
        requireDisjoint(table, "table", d);
        requireDisjoint(indices, "indices", d);
        checkIndices(indices, indexType, nIdx, nRows);
        b.gatherConvert(c, table, nRows, rowElems, indices, indexType, nIdx, d);
    }

    // ------------------------------------------------------------------ checks

    /** {@code count * elementBytes}, or an IllegalArgumentException naming {@code what} when it overflows. */
    private static long bytes(long count, long elementBytes, String what) {
        try {
            return Math.multiplyExact(count, elementBytes);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(what + " = " + count + " times " + elementBytes
                    + " bytes overflows a long");
        }
    }

    private static long elements(long byteSize, int elementBytes, String what, String type) {
        if (byteSize % elementBytes != 0) {
            throw new IllegalArgumentException(what + " is " + byteSize + " bytes, not a whole number of " + type
                    + " elements (" + elementBytes + " bytes each)");
        }
        return byteSize / elementBytes;
    }

    private static void requireSize(MemorySegment seg, long needed, String what, Conversion c, long count) {
        if (seg.byteSize() < needed) {
            throw new IndexOutOfBoundsException(c + ": " + what + " is " + seg.byteSize() + " bytes; count=" + count
                    + " needs " + needed);
        }
    }

    private static void requireWritable(MemorySegment dst, String what) {
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException(what + " is read-only");
        }
    }

    private static void requireDisjoint(MemorySegment src, String what, MemorySegment dst) {
        if (src.asOverlappingSlice(dst).isPresent()) {
            throw new IllegalArgumentException(what + " and dst overlap; the kernels need separate memory");
        }
    }

    /** Every index in {@code [0, nRows)}, read as the kernels will read them. */
    private static void checkIndices(MemorySegment indices, IndexType type, long nIdx, long nRows) {
        if (type == IndexType.U32) {
            for (long i = 0; i < nIdx; i++) {
                long v = Integer.toUnsignedLong(indices.get(ScalarKernels.I32, i * 4));
                if (v >= nRows) {
                    throw badIndex(i, v, nRows);
                }
            }
        } else {
            for (long i = 0; i < nIdx; i++) {
                long v = indices.get(ScalarKernels.I64, i * 8);
                if (v < 0 || v >= nRows) {
                    throw badIndex(i, v, nRows);
                }
            }
        }
    }

    private static IndexOutOfBoundsException badIndex(long i, long v, long nRows) {
        return new IndexOutOfBoundsException("indices[" + i + "] = " + v + " is outside [0, " + nRows
                + ") (the table has " + nRows + " rows); nothing was written");
    }

    /** The array range {@code [offset, offset + count)} as a heap segment. */
    private static MemorySegment slice(MemorySegment whole, int length, int elementBytes, int offset, int count,
            String what) {
        if (offset < 0 || count < 0 || offset > length - count) {
            throw new IndexOutOfBoundsException(what + ": offset " + offset + " and count " + count
                    + " are outside an array of length " + length);
        }
        return whole.asSlice((long) offset * elementBytes, (long) count * elementBytes);
    }

    private static MemorySegment floatsFrom(float[] dst, int dstOffset) {
        if (dstOffset < 0 || dstOffset > dst.length) {
            throw new IndexOutOfBoundsException("dst: offset " + dstOffset + " is outside an array of length "
                    + dst.length);
        }
        return MemorySegment.ofArray(dst).asSlice(dstOffset * 4L);
    }

    private static void requireLittleEndian() {
        if (!LITTLE_ENDIAN) {
            throw new UnsupportedOperationException("the heap-array overloads need a little-endian JVM; use"
                    + " little-endian MemorySegments instead");
        }
    }

    private static void requireArrays(Conversion c, Class<?> src, Class<?> dst) {
        Objects.requireNonNull(c, "conversion");
        requireLittleEndian();
        if (arrayElement(c.source()) != src || arrayElement(c.target()) != dst) {
            throw new IllegalArgumentException(c + " reads " + arrayElement(c.source()) + "[] and writes "
                    + arrayElement(c.target()) + "[], not " + src + "[] and " + dst + "[]");
        }
    }

    private static Class<?> arrayElement(Dtype d) {
        return switch (d) {
            case I8, U8 -> byte.class;
            case I16, U16, F16, BF16 -> short.class;
            case I32, U32 -> int.class;
            case I64, U64 -> long.class;
            case F32 -> float.class;
            case F64 -> double.class;
            default -> throw new IllegalArgumentException("no kernel reads or writes " + d);
        };
    }

    // ------------------------------------------------------------------ path selection

    /** The chosen path; selected (and logged) on first use. */
    static Backend backend() {
        return Selected.BACKEND;
    }

    private static final class Selected {
        static final Backend BACKEND = selectAndLog();
    }

    /** The outcome of trying to set up one path: a backend, or why there is none. */
    record Attempt(Backend backend, String problem, boolean serious) {
        static Attempt ok(Backend b) {
            return new Attempt(b, null, false);
        }

        static Attempt failed(String problem, boolean serious) {
            return new Attempt(null, problem, serious);
        }
    }

    /** What {@link #choose} decided, with the notes worth logging. */
    record Choice(Backend backend, List<String> notes, boolean warn) {}

    /**
     * Chooses a path for {@code requested} (the value of {@value #PATH_PROPERTY}; null, blank or
     * {@code auto} means the best available). The attempts are only run when needed, so a forced
     * Java path never loads the native library.
     */
    static Choice choose(String requested, Supplier<Attempt> nativePath, Supplier<Attempt> vectorPath) {
        String r = requested == null ? "" : requested.trim().toLowerCase(Locale.ROOT);
        List<String> notes = new ArrayList<>();
        switch (r) {
            case "", "auto" -> {
                Attempt n = nativePath.get();
                if (n.backend() != null) {
                    return new Choice(n.backend(), notes, false);
                }
                notes.add("native kernels unavailable: " + n.problem());
                Attempt v = vectorPath.get();
                if (v.backend() != null) {
                    return new Choice(v.backend(), notes, n.serious());
                }
                notes.add("Vector API unavailable: " + v.problem());
                return new Choice(ScalarBackend.INSTANCE, notes, n.serious() || v.serious());
            }
            case "native", "vector" -> {
                Attempt a = r.equals("native") ? nativePath.get() : vectorPath.get();
                if (a.backend() != null) {
                    notes.add("forced by -D" + PATH_PROPERTY + "=" + requested);
                    return new Choice(a.backend(), notes, false);
                }
                return new Choice(new UnavailableBackend("-D" + PATH_PROPERTY + "=" + requested + " forces the "
                        + r + " kernels, but they cannot run: " + a.problem()), notes, true);
            }
            case "scalar" -> {
                notes.add("forced by -D" + PATH_PROPERTY + "=" + requested);
                return new Choice(ScalarBackend.INSTANCE, notes, false);
            }
            default -> {
                return new Choice(new UnavailableBackend("-D" + PATH_PROPERTY + "=" + requested
                        + " is not one of native, vector, scalar, auto"), notes, true);
            }
        }
    }

    private static Backend selectAndLog() {
        Choice c = choose(System.getProperty(PATH_PROPERTY), Kernels::attemptNative, Kernels::attemptVector);
        StringBuilder line = new StringBuilder("safetensors-jvm kernels: ").append(c.backend().describe());
        for (String note : c.notes()) {
            line.append("; ").append(note);
        }
        // The expected outcome (native, chosen by default) is DEBUG; a fallback or a forced path is
        // INFO; a library that exists but cannot load, or a forced path that cannot run, is WARNING.
        System.Logger.Level level = c.warn() ? System.Logger.Level.WARNING
                : c.notes().isEmpty() ? System.Logger.Level.DEBUG : System.Logger.Level.INFO;
        LOG.log(level, line.toString());
        return c.backend();
    }

    static Attempt attemptNative() {
        if (NativeLibrary.INSTANCE.isEmpty()) {
            return Attempt.failed(NativeLibrary.FAILURE, !NativeLibrary.NOT_PACKAGED);
        }
        try {
            return Attempt.ok(NativeBackend.INSTANCE);
        } catch (Throwable t) {
            return Attempt.failed(rootMessage(t), true);
        }
    }

    static Attempt attemptVector() {
        return VectorHolder.ATTEMPT;
    }

    private static final class VectorHolder {
        static final Attempt ATTEMPT = loadVector();
    }

    /** Links {@link VectorBackend} only when its module is present, and only by name. */
    private static Attempt loadVector() {
        if (ModuleLayer.boot().findModule(VECTOR_MODULE).isEmpty()) {
            return Attempt.failed("the module " + VECTOR_MODULE + " is not in the boot layer (start the JVM with"
                    + " --add-modules=" + VECTOR_MODULE + " to use it)", false);
        }
        try {
            Class<?> k = Class.forName(Kernels.class.getPackageName() + ".VectorBackend");
            return Attempt.ok((Backend) k.getDeclaredConstructor().newInstance());
        } catch (Throwable t) {
            return Attempt.failed(rootMessage(t), true);
        }
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.toString();
    }

    /**
     * Test hook: the backend of one path, whatever was selected.
     *
     * @throws IllegalStateException if that path cannot run here
     */
    static Backend backend(Implementation which) {
        Attempt a = switch (which) {
            case SCALAR -> Attempt.ok(ScalarBackend.INSTANCE);
            case VECTOR -> attemptVector();
            case NATIVE -> attemptNative();
        };
        if (a.backend() == null) {
            throw new IllegalStateException(which + " is unavailable: " + a.problem());
        }
        return a.backend();
    }
}
