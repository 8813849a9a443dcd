package io.github.semyonsinchenko.safetensors.kernels;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The native path: every kernel of {@code safetensors_native.h} bound once, as a static final
 * handle named after its C symbol, so the JIT inlines the downcall.
 *
 * <p>Each kernel has two handles. {@code MH_st_x} is an ordinary downcall for off-heap segments
 * (mmap slices, arena memory): the thread leaves Java for the call, so a long conversion never
 * holds up a GC safepoint. {@code MH_st_x_heap} is bound with {@link Linker.Option#critical
 * critical(true)}, which lets heap segments (Java arrays) reach C without a copy; it is used
 * whenever a heap segment is involved, in chunks of at most {@value #CRITICAL_CHUNK_BYTES} bytes
 * so that a safepoint waits for at most one chunk.
 *
 * <p>Class initialization fails when the library is not loaded or lacks a symbol; {@link
 * Kernels} then treats the native path as unavailable.
 */
final class NativeBackend extends Backend {
    private static final NativeLibrary LIB = NativeLibrary.INSTANCE.orElseThrow(
            () -> new IllegalStateException(NativeLibrary.FAILURE));

    /** Bytes a critical (heap) call may read or write at most, per call. */
    static final long CRITICAL_CHUNK_BYTES = 4L << 20;

    private static final FunctionDescriptor CONVERT = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG);
    private static final FunctionDescriptor GATHER =
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG);
    private static final Linker.Option CRITICAL = Linker.Option.critical(true);

    static final MethodHandle MH_st_isa_supported =
            LIB.downcall("st_isa_supported", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle MH_st_fault_guard_active =
            LIB.downcall("st_fault_guard_active", FunctionDescriptor.of(JAVA_INT));
    static final MethodHandle MH_st_fault_guard_enable =
            LIB.downcall("st_fault_guard_enable", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    static final MethodHandle MH_st_last_fault_address =
            LIB.downcall("st_last_fault_address", FunctionDescriptor.of(JAVA_LONG));
    static final MethodHandle MH_st_select_isa =
            LIB.downcall("st_select_isa", FunctionDescriptor.of(JAVA_INT, ADDRESS));

    static final MethodHandle MH_st_bf16_to_f32 = LIB.downcall("st_bf16_to_f32", CONVERT);
    static final MethodHandle MH_st_bf16_to_f32_heap = LIB.downcall("st_bf16_to_f32", CONVERT, CRITICAL);
    static final MethodHandle MH_st_f32_to_bf16_rne = LIB.downcall("st_f32_to_bf16_rne", CONVERT);
    static final MethodHandle MH_st_f32_to_bf16_rne_heap = LIB.downcall("st_f32_to_bf16_rne", CONVERT, CRITICAL);
    static final MethodHandle MH_st_f32_to_bf16_trunc = LIB.downcall("st_f32_to_bf16_trunc", CONVERT);
    static final MethodHandle MH_st_f32_to_bf16_trunc_heap = LIB.downcall("st_f32_to_bf16_trunc", CONVERT, CRITICAL);
    static final MethodHandle MH_st_f16_to_f32 = LIB.downcall("st_f16_to_f32", CONVERT);
    static final MethodHandle MH_st_f16_to_f32_heap = LIB.downcall("st_f16_to_f32", CONVERT, CRITICAL);
    static final MethodHandle MH_st_f32_to_f16_rne = LIB.downcall("st_f32_to_f16_rne", CONVERT);
    static final MethodHandle MH_st_f32_to_f16_rne_heap = LIB.downcall("st_f32_to_f16_rne", CONVERT, CRITICAL);
    static final MethodHandle MH_st_f32_to_f16_trunc = LIB.downcall("st_f32_to_f16_trunc", CONVERT);
    static final MethodHandle MH_st_f32_to_f16_trunc_heap = LIB.downcall("st_f32_to_f16_trunc", CONVERT, CRITICAL);
    static final MethodHandle MH_st_f16_to_bf16 = LIB.downcall("st_f16_to_bf16", CONVERT);
    static final MethodHandle MH_st_f16_to_bf16_heap = LIB.downcall("st_f16_to_bf16", CONVERT, CRITICAL);
    static final MethodHandle MH_st_bf16_to_f16 = LIB.downcall("st_bf16_to_f16", CONVERT);
    static final MethodHandle MH_st_bf16_to_f16_heap = LIB.downcall("st_bf16_to_f16", CONVERT, CRITICAL);
    static final MethodHandle MH_st_i8_to_f32 = LIB.downcall("st_i8_to_f32", CONVERT);
    static final MethodHandle MH_st_i8_to_f32_heap = LIB.downcall("st_i8_to_f32", CONVERT, CRITICAL);
    static final MethodHandle MH_st_u8_to_f32 = LIB.downcall("st_u8_to_f32", CONVERT);
    static final MethodHandle MH_st_u8_to_f32_heap = LIB.downcall("st_u8_to_f32", CONVERT, CRITICAL);
    static final MethodHandle MH_st_i16_to_f32 = LIB.downcall("st_i16_to_f32", CONVERT);
    static final MethodHandle MH_st_i16_to_f32_heap = LIB.downcall("st_i16_to_f32", CONVERT, CRITICAL);
    static final MethodHandle MH_st_u16_to_f32 = LIB.downcall("st_u16_to_f32", CONVERT);
    static final MethodHandle MH_st_u16_to_f32_heap = LIB.downcall("st_u16_to_f32", CONVERT, CRITICAL);
    static final MethodHandle MH_st_i32_to_f32 = LIB.downcall("st_i32_to_f32", CONVERT);
    static final MethodHandle MH_st_i32_to_f32_heap = LIB.downcall("st_i32_to_f32", CONVERT, CRITICAL);
    static final MethodHandle MH_st_u32_to_f32 = LIB.downcall("st_u32_to_f32", CONVERT);
    static final MethodHandle MH_st_u32_to_f32_heap = LIB.downcall("st_u32_to_f32", CONVERT, CRITICAL);
    static final MethodHandle MH_st_i64_to_f32 = LIB.downcall("st_i64_to_f32", CONVERT);
    static final MethodHandle MH_st_i64_to_f32_heap = LIB.downcall("st_i64_to_f32", CONVERT, CRITICAL);
    static final MethodHandle MH_st_u64_to_f32 = LIB.downcall("st_u64_to_f32", CONVERT);
    static final MethodHandle MH_st_u64_to_f32_heap = LIB.downcall("st_u64_to_f32", CONVERT, CRITICAL);
    static final MethodHandle MH_st_f64_to_f32 = LIB.downcall("st_f64_to_f32", CONVERT);
    static final MethodHandle MH_st_f64_to_f32_heap = LIB.downcall("st_f64_to_f32", CONVERT, CRITICAL);
    static final MethodHandle MH_st_gather_u32 = LIB.downcall("st_gather_u32", GATHER);
    static final MethodHandle MH_st_gather_u32_heap = LIB.downcall("st_gather_u32", GATHER, CRITICAL);
    static final MethodHandle MH_st_gather_i64 = LIB.downcall("st_gather_i64", GATHER);
    static final MethodHandle MH_st_gather_i64_heap = LIB.downcall("st_gather_i64", GATHER, CRITICAL);
    static final MethodHandle MH_st_gather_f16_to_f32_u32 = LIB.downcall("st_gather_f16_to_f32_u32", GATHER);
    static final MethodHandle MH_st_gather_f16_to_f32_u32_heap = LIB.downcall("st_gather_f16_to_f32_u32", GATHER, CRITICAL);
    static final MethodHandle MH_st_gather_f16_to_f32_i64 = LIB.downcall("st_gather_f16_to_f32_i64", GATHER);
    static final MethodHandle MH_st_gather_f16_to_f32_i64_heap = LIB.downcall("st_gather_f16_to_f32_i64", GATHER, CRITICAL);
    static final MethodHandle MH_st_gather_bf16_to_f32_u32 = LIB.downcall("st_gather_bf16_to_f32_u32", GATHER);
    static final MethodHandle MH_st_gather_bf16_to_f32_u32_heap = LIB.downcall("st_gather_bf16_to_f32_u32", GATHER, CRITICAL);
    static final MethodHandle MH_st_gather_bf16_to_f32_i64 = LIB.downcall("st_gather_bf16_to_f32_i64", GATHER);
    static final MethodHandle MH_st_gather_bf16_to_f32_i64_heap = LIB.downcall("st_gather_bf16_to_f32_i64", GATHER, CRITICAL);

    static final NativeBackend INSTANCE = new NativeBackend();

    private NativeBackend() {
        String isa = LIB.isaName();
        if ("unsupported".equals(isa)) {
            throw new IllegalStateException("the native library selected ISA level 'unsupported' (is the"
                    + " environment variable SAFETENSORS_NATIVE_ISA set to a level this CPU lacks?)");
        }
    }

    @Override
    Implementation implementation() {
        return Implementation.NATIVE;
    }

    @Override
    String describe() {
        return "NATIVE (isa " + LIB.isaName() + ", libsafetensors_native " + LIB.version
                + (faultGuardActive() ? "" : ", no fault guard: a file truncated while mapped aborts the JVM") + ")";
    }

    /** 1 if the named level can run on this CPU (st_isa_supported). */
    static boolean isaSupported(String name) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) MH_st_isa_supported.invokeExact(arena.allocateFrom(name)) != 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Switches the library's ISA level (st_select_isa); for tests and benchmarks, not thread-safe. */
    static void selectIsa(String name) {
        int rc;
        try (Arena arena = Arena.ofConfined()) {
            rc = (int) MH_st_select_isa.invokeExact(arena.allocateFrom(name));
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (rc != 0) {
            throw new UnsupportedOperationException("st_select_isa(\"" + name + "\") returned "
                    + (rc == 3 ? "ST_ERR_UNSUPPORTED: no such level, or this CPU cannot run it" : "status " + rc)
                    + "; the active level is still '" + LIB.isaName() + "'");
        }
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(t);
    }

    /**
     * ST_ERR_FAULT: the kernel's memory access faulted (a mapped file truncated under it) and the
     * library's fault guard turned the signal into a status. {@link Kernels} turns this into a
     * {@link io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException} naming the file.
     */
    static final class Fault extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient long address;

        Fault(String call, long address) {
            super(call + " returned ST_ERR_FAULT (address 0x" + Long.toHexString(address) + ")", null, false, false);
            this.address = address;
        }
    }

    /** st_last_fault_address: where this thread's last kernel fault was; read right after the call. */
    private static long lastFaultAddress() {
        try {
            return (long) MH_st_last_fault_address.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** 1 if the library's SIGBUS/SIGSEGV handler is installed and still in place (st_fault_guard_active). */
    static boolean faultGuardActive() {
        try {
            return (int) MH_st_fault_guard_active.invokeExact() != 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Switches the guard for the calls that start afterwards (st_fault_guard_enable); whether it is on now. */
    static boolean enableFaultGuard(boolean on) {
        try {
            return (int) MH_st_fault_guard_enable.invokeExact(on ? 1 : 0) != 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Maps a status code of safetensors_native.h to an exception. */
    static void check(int rc, String call) {
        if (rc == 0) {
            return;
        }
        throw switch (rc) {
            case 1 -> new IllegalArgumentException(call + " returned ST_ERR_NULL (a NULL pointer with a non-zero length)");
            // Kernels checked every index before the call, so the native check saw another value.
            case 2 -> new IndexOutOfBoundsException(call + " returned ST_ERR_INDEX: a gather index was outside [0,"
                    + " n_rows) although it was inside when checked; another thread changed the indices during the"
                    + " gather, and rows before it (in a parallel gather: of any range) may have been written");
            case 3 -> new UnsupportedOperationException(call + " returned ST_ERR_UNSUPPORTED: the native ISA level '"
                    + LIB.isaName() + "' cannot run on this CPU");
            case 4 -> new IllegalArgumentException(call + " returned ST_ERR_ARGUMENT");
            case 5 -> new Fault(call, lastFaultAddress());
            default -> new IllegalStateException(call + " returned the unknown status " + rc);
        };
    }

    // ---- conversions ----

    @Override
    void convert(Conversion c, MemorySegment src, MemorySegment dst, long n) {
        if (!src.isNative() || !dst.isNative()) {
            long chunk = CRITICAL_CHUNK_BYTES / Math.max(c.sourceBytes(), c.targetBytes());
            if (n <= chunk) {
                check(convertHeap(c, dst, src, n), c.nativeSymbol());
                return;
            }
            for (long i = 0; i < n; i += chunk) {
                long m = Math.min(chunk, n - i);
                check(convertHeap(c, dst.asSlice(i * c.targetBytes(), m * c.targetBytes()),
                        src.asSlice(i * c.sourceBytes(), m * c.sourceBytes()), m), c.nativeSymbol());
            }
        } else {
            check(convertNative(c, dst, src, n), c.nativeSymbol());
        }
    }

    private static int convertNative(Conversion c, MemorySegment dst, MemorySegment src, long n) {
        try {
            return switch (c) {
                case BF16_TO_F32 -> (int) MH_st_bf16_to_f32.invokeExact(dst, src, n);
                case F32_TO_BF16_RNE -> (int) MH_st_f32_to_bf16_rne.invokeExact(dst, src, n);
                case F32_TO_BF16_TRUNC -> (int) MH_st_f32_to_bf16_trunc.invokeExact(dst, src, n);
                case F16_TO_F32 -> (int) MH_st_f16_to_f32.invokeExact(dst, src, n);
                case F32_TO_F16_RNE -> (int) MH_st_f32_to_f16_rne.invokeExact(dst, src, n);
                case F32_TO_F16_TRUNC -> (int) MH_st_f32_to_f16_trunc.invokeExact(dst, src, n);
                case F16_TO_BF16 -> (int) MH_st_f16_to_bf16.invokeExact(dst, src, n);
                case BF16_TO_F16 -> (int) MH_st_bf16_to_f16.invokeExact(dst, src, n);
                case I8_TO_F32 -> (int) MH_st_i8_to_f32.invokeExact(dst, src, n);
                case U8_TO_F32 -> (int) MH_st_u8_to_f32.invokeExact(dst, src, n);
                case I16_TO_F32 -> (int) MH_st_i16_to_f32.invokeExact(dst, src, n);
                case U16_TO_F32 -> (int) MH_st_u16_to_f32.invokeExact(dst, src, n);
                case I32_TO_F32 -> (int) MH_st_i32_to_f32.invokeExact(dst, src, n);
                case U32_TO_F32 -> (int) MH_st_u32_to_f32.invokeExact(dst, src, n);
                case I64_TO_F32 -> (int) MH_st_i64_to_f32.invokeExact(dst, src, n);
                case U64_TO_F32 -> (int) MH_st_u64_to_f32.invokeExact(dst, src, n);
                case F64_TO_F32 -> (int) MH_st_f64_to_f32.invokeExact(dst, src, n);
                default -> throw noKernel(c);
            };
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static int convertHeap(Conversion c, MemorySegment dst, MemorySegment src, long n) {
        try {
            return switch (c) {
                case BF16_TO_F32 -> (int) MH_st_bf16_to_f32_heap.invokeExact(dst, src, n);
                case F32_TO_BF16_RNE -> (int) MH_st_f32_to_bf16_rne_heap.invokeExact(dst, src, n);
                case F32_TO_BF16_TRUNC -> (int) MH_st_f32_to_bf16_trunc_heap.invokeExact(dst, src, n);
                case F16_TO_F32 -> (int) MH_st_f16_to_f32_heap.invokeExact(dst, src, n);
                case F32_TO_F16_RNE -> (int) MH_st_f32_to_f16_rne_heap.invokeExact(dst, src, n);
                case F32_TO_F16_TRUNC -> (int) MH_st_f32_to_f16_trunc_heap.invokeExact(dst, src, n);
                case F16_TO_BF16 -> (int) MH_st_f16_to_bf16_heap.invokeExact(dst, src, n);
                case BF16_TO_F16 -> (int) MH_st_bf16_to_f16_heap.invokeExact(dst, src, n);
                case I8_TO_F32 -> (int) MH_st_i8_to_f32_heap.invokeExact(dst, src, n);
                case U8_TO_F32 -> (int) MH_st_u8_to_f32_heap.invokeExact(dst, src, n);
                case I16_TO_F32 -> (int) MH_st_i16_to_f32_heap.invokeExact(dst, src, n);
                case U16_TO_F32 -> (int) MH_st_u16_to_f32_heap.invokeExact(dst, src, n);
                case I32_TO_F32 -> (int) MH_st_i32_to_f32_heap.invokeExact(dst, src, n);
                case U32_TO_F32 -> (int) MH_st_u32_to_f32_heap.invokeExact(dst, src, n);
                case I64_TO_F32 -> (int) MH_st_i64_to_f32_heap.invokeExact(dst, src, n);
                case U64_TO_F32 -> (int) MH_st_u64_to_f32_heap.invokeExact(dst, src, n);
                case F64_TO_F32 -> (int) MH_st_f64_to_f32_heap.invokeExact(dst, src, n);
                default -> throw noKernel(c);
            };
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Kernels routes the conversions without a native kernel to the Java path; reaching here is a bug. */
    private static IllegalStateException noKernel(Conversion c) {
        return new IllegalStateException(c + " has no native kernel; Kernels runs it on the Java path");
    }

    // ---- gathers ----

    @Override
    void gather(MemorySegment table, long nRows, long rowBytes, MemorySegment indices, IndexType type, long nIdx,
            MemorySegment dst) {
        gatherChunks(null, table, nRows, rowBytes, rowBytes, indices, type, nIdx, dst);
    }

    @Override
    void gatherConvert(Conversion c, MemorySegment table, long nRows, long rowElems, MemorySegment indices,
            IndexType type, long nIdx, MemorySegment dst) {
        gatherChunks(c, table, nRows, rowElems, rowElems * 4, indices, type, nIdx, dst);
    }

    /**
     * One call when everything is off-heap; otherwise critical calls over chunks of indices. A chunk
     * is bounded by the bytes it writes (the table is only read at the rows asked for).
     */
    private static void gatherChunks(Conversion c, MemorySegment table, long nRows, long row, long dstRowBytes,
            MemorySegment indices, IndexType type, long nIdx, MemorySegment dst) {
        String symbol = symbol(c, type);
        if (table.isNative() && indices.isNative() && dst.isNative()) {
            check(gatherCall(c, type, false, dst, table, nRows, row, indices, nIdx), symbol);
            return;
        }
        long chunk = Math.max(1, CRITICAL_CHUNK_BYTES / dstRowBytes);
        for (long i = 0; i < nIdx; i += chunk) {
            long m = Math.min(chunk, nIdx - i);
            check(gatherCall(c, type, true, dst.asSlice(i * dstRowBytes, m * dstRowBytes), table, nRows, row,
                    indices.asSlice(i * type.bytes(), m * type.bytes()), m), symbol);
        }
    }

    private static String symbol(Conversion c, IndexType type) {
        String idx = type == IndexType.U32 ? "u32" : "i64";
        if (c == null) {
            return "st_gather_" + idx;
        }
        return (c == Conversion.F16_TO_F32 ? "st_gather_f16_to_f32_" : "st_gather_bf16_to_f32_") + idx;
    }

    private static int gatherCall(Conversion c, IndexType type, boolean heap, MemorySegment dst, MemorySegment table,
            long nRows, long row, MemorySegment idx, long nIdx) {
        boolean u32 = type == IndexType.U32;
        try {
            if (c == null) {
                if (u32) {
                    return heap ? (int) MH_st_gather_u32_heap.invokeExact(dst, table, nRows, row, idx, nIdx)
                            : (int) MH_st_gather_u32.invokeExact(dst, table, nRows, row, idx, nIdx);
                }
                return heap ? (int) MH_st_gather_i64_heap.invokeExact(dst, table, nRows, row, idx, nIdx)
                        : (int) MH_st_gather_i64.invokeExact(dst, table, nRows, row, idx, nIdx);
            }
            if (c == Conversion.F16_TO_F32) {
                if (u32) {
                    return heap ? (int) MH_st_gather_f16_to_f32_u32_heap.invokeExact(dst, table, nRows, row, idx, nIdx)
                            : (int) MH_st_gather_f16_to_f32_u32.invokeExact(dst, table, nRows, row, idx, nIdx);
                }
                return heap ? (int) MH_st_gather_f16_to_f32_i64_heap.invokeExact(dst, table, nRows, row, idx, nIdx)
                        : (int) MH_st_gather_f16_to_f32_i64.invokeExact(dst, table, nRows, row, idx, nIdx);
            }
            if (u32) {
                return heap ? (int) MH_st_gather_bf16_to_f32_u32_heap.invokeExact(dst, table, nRows, row, idx, nIdx)
                        : (int) MH_st_gather_bf16_to_f32_u32.invokeExact(dst, table, nRows, row, idx, nIdx);
            }
            return heap ? (int) MH_st_gather_bf16_to_f32_i64_heap.invokeExact(dst, table, nRows, row, idx, nIdx)
                    : (int) MH_st_gather_bf16_to_f32_i64.invokeExact(dst, table, nRows, row, idx, nIdx);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
