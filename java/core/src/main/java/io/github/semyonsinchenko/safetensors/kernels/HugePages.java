package io.github.semyonsinchenko.safetensors.kernels;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;

/**
 * Large allocations in transparent huge pages (2 MiB on x86-64), for tables read at random rows:
 * with 4 KiB pages nearly every row of a gigabyte table also misses the TLB, with huge pages
 * almost none does.
 *
 * <p>On Linux the memory is an anonymous {@code mmap} aligned to 2 MiB and marked
 * {@code madvise(MADV_HUGEPAGE)}, so it gets huge pages when
 * {@code /sys/kernel/mm/transparent_hugepage/enabled} is {@code always} or {@code madvise} (the
 * kernel may still fall back to small pages under memory pressure). Elsewhere, or when the calls
 * are unavailable, it is ordinary {@link Arena#allocate} memory. Either way the caller's arena owns
 * it: closing the arena unmaps it, and every access after that throws like any closed segment.
 */
public final class HugePages {
    /** The huge page size these allocations are aligned to. */
    public static final long HUGE_PAGE_BYTES = 2L << 20;

    private static final int PROT_READ_WRITE = 0x3;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20; // Linux values (x86-64, aarch64)
    private static final int MADV_HUGEPAGE = 14;
    private static final Calls CALLS = Calls.load();

    private HugePages() {}

    /** mmap, madvise and munmap from the C library, or null where they are not the Linux ones. */
    private record Calls(MethodHandle mmap, MethodHandle madvise, MethodHandle munmap) {
        static Calls load() {
            if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
                return null;
            }
            try {
                Linker linker = Linker.nativeLinker();
                var libc = linker.defaultLookup();
                return new Calls(
                        linker.downcallHandle(libc.find("mmap").orElseThrow(),
                                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG)),
                        linker.downcallHandle(libc.find("madvise").orElseThrow(),
                                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT)),
                        linker.downcallHandle(libc.find("munmap").orElseThrow(),
                                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG)));
            } catch (Throwable t) { // no native access, no symbol: ordinary memory then
                return null;
            }
        }
    }

    /**
     * {@code bytes} of zeroed memory owned by {@code arena}, 2 MiB-aligned and advised into
     * transparent huge pages where the OS offers them, else ordinary arena memory (64-byte aligned).
     *
     * @param arena owns the memory; closing it frees it
     * @param bytes the size, at least 0
     * @return the memory
     * @throws IllegalArgumentException if {@code bytes} is negative
     * @throws OutOfMemoryError if the memory cannot be had
     */
    public static MemorySegment allocate(Arena arena, long bytes) {
        return map(arena, bytes, true);
    }

    /**
     * {@code bytes} of zeroed anonymous memory owned by {@code arena}, in ordinary pages that the
     * kernel supplies (zeroed) at first touch: unlike {@link Arena#allocate}, which zeroes every byte
     * before returning, this costs nothing up front, so a buffer that is about to be filled (a read
     * target) is touched once, by its writers, instead of twice. Ordinary arena memory where the
     * calls are unavailable.
     *
     * @param arena owns the memory; closing it frees it
     * @param bytes the size, at least 0
     * @return the memory
     * @throws IllegalArgumentException if {@code bytes} is negative
     * @throws OutOfMemoryError if the memory cannot be had
     */
    public static MemorySegment allocateOnDemand(Arena arena, long bytes) {
        return map(arena, bytes, false);
    }

    private static MemorySegment map(Arena arena, long bytes, boolean huge) {
        Objects.requireNonNull(arena, "arena");
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must not be negative, got " + bytes);
        }
        if (CALLS == null || bytes == 0) {
            return arena.allocate(bytes, 64);
        }
        long span = roundUp(bytes) + (huge ? HUGE_PAGE_BYTES : 0); // room to align the start to 2 MiB
        MemorySegment raw;
        try {
            raw = (MemorySegment) CALLS.mmap().invokeExact(MemorySegment.NULL, span, PROT_READ_WRITE,
                    MAP_PRIVATE_ANONYMOUS, -1, 0L);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (raw.address() == -1L) { // MAP_FAILED
            return arena.allocate(bytes, 64);
        }
        long start = huge ? roundUp(raw.address()) : raw.address();
        long rawAddress = raw.address();
        MemorySegment region = MemorySegment.ofAddress(start).reinterpret(bytes, arena, s -> unmap(rawAddress, span));
        if (huge) {
            try {
                int ignored = (int) CALLS.madvise().invokeExact(MemorySegment.ofAddress(start), roundUp(bytes),
                        MADV_HUGEPAGE); // a refusal (THP off) only means small pages
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
        return region;
    }

    /**
     * A copy of {@code src} (for example a tensor of a mapped file) in memory from
     * {@link #allocate}, owned by {@code arena}. A fault reading a mapped {@code src} (its file
     * truncated meanwhile) is the JDK's {@link InternalError}; {@code Tensor.load} reports it as a
     * typed exception naming the file.
     *
     * @param src the bytes to copy
     * @param arena owns the copy
     * @return the copy
     */
    public static MemorySegment copyOf(MemorySegment src, Arena arena) {
        MemorySegment dst = allocate(arena, src.byteSize());
        MemorySegment.copy(src, 0, dst, 0, src.byteSize());
        MappedFiles.raisePendingFault();
        return dst;
    }

    /**
     * What this machine gives: {@code "madvise"} / {@code "always"} / {@code "never"} from the
     * kernel's transparent huge page setting, or why allocations are ordinary memory.
     *
     * @return the setting or the reason, for diagnostics
     */
    public static String status() {
        if (CALLS == null) {
            return "unavailable (not Linux, or no native access): ordinary memory";
        }
        try {
            String s = Files.readString(Path.of("/sys/kernel/mm/transparent_hugepage/enabled")).trim();
            int open = s.indexOf('[');
            int close = s.indexOf(']');
            return open >= 0 && close > open ? s.substring(open + 1, close) : s;
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    private static long roundUp(long v) {
        return (v + HUGE_PAGE_BYTES - 1) & -HUGE_PAGE_BYTES;
    }

    private static void unmap(long address, long span) {
        try {
            int ignored = (int) CALLS.munmap().invokeExact(MemorySegment.ofAddress(address), span);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
