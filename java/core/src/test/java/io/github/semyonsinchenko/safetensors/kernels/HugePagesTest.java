package io.github.semyonsinchenko.safetensors.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class HugePagesTest {
    private static final long MIB = 1L << 20;

    @Test
    void allocationIsAlignedZeroedWritableAndOwnedByTheArena() {
        MemorySegment seg;
        try (Arena arena = Arena.ofConfined()) {
            seg = HugePages.allocate(arena, 5 * MIB + 3);
            assertEquals(5 * MIB + 3, seg.byteSize());
            if (!HugePages.status().startsWith("unavailable")) {
                assertEquals(0, seg.address() % HugePages.HUGE_PAGE_BYTES, "not 2 MiB aligned");
            }
            for (long off = 0; off < seg.byteSize(); off += 4096) {
                assertEquals(0, seg.get(ValueLayout.JAVA_BYTE, off));
            }
            seg.set(ValueLayout.JAVA_BYTE, seg.byteSize() - 1, (byte) 7);
            assertEquals(7, seg.get(ValueLayout.JAVA_BYTE, seg.byteSize() - 1));
            assertThrows(IndexOutOfBoundsException.class, () -> seg.get(ValueLayout.JAVA_BYTE, 5 * MIB + 3));
        }
        assertThrows(IllegalStateException.class, () -> seg.get(ValueLayout.JAVA_BYTE, 0));
    }

    /** With THP in "madvise" or "always" mode the touched memory is backed by huge pages (smaps says so). */
    @Test
    void theKernelBacksItWithHugePagesWhereOffered() throws IOException {
        String status = HugePages.status();
        if (!status.equals("madvise") && !status.equals("always")) {
            return; // nothing to check on this machine: the fallback is ordinary memory
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = HugePages.allocate(arena, 8 * MIB);
            seg.fill((byte) 1);
            long kb = anonHugePagesKb(seg.address());
            assertTrue(kb >= 2048, "AnonHugePages of the allocation is " + kb + " kB");
        }
    }

    /** On-demand memory is zeroed and arena-owned, and its pages arrive at first touch, not at allocation. */
    @Test
    void onDemandMemoryIsZeroedOwnedAndNotTouchedUpFront() throws IOException {
        MemorySegment seg;
        try (Arena arena = Arena.ofConfined()) {
            seg = HugePages.allocateOnDemand(arena, 64 * MIB + 5);
            assertEquals(64 * MIB + 5, seg.byteSize());
            if (!HugePages.status().startsWith("unavailable")) {
                long before = smapsKb(seg.address(), "Rss:");
                seg.fill((byte) 0);
                long after = smapsKb(seg.address(), "Rss:");
                assertTrue(after - before >= 60 * 1024, "resident before touching " + before + " kB, after " + after);
            }
            for (long off = 0; off < seg.byteSize(); off += 4096) {
                assertEquals(0, seg.get(ValueLayout.JAVA_BYTE, off));
            }
            seg.set(ValueLayout.JAVA_BYTE, seg.byteSize() - 1, (byte) 9);
            assertEquals(9, seg.get(ValueLayout.JAVA_BYTE, seg.byteSize() - 1));
            assertThrows(IndexOutOfBoundsException.class, () -> seg.get(ValueLayout.JAVA_BYTE, 64 * MIB + 5));
            assertEquals(0, HugePages.allocateOnDemand(arena, 0).byteSize());
            assertThrows(IllegalArgumentException.class, () -> HugePages.allocateOnDemand(arena, -1));
        }
        assertThrows(IllegalStateException.class, () -> seg.get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void copyOfCopiesAndEmptyAndNegativeSizes() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(3 * MIB);
            for (long i = 0; i < src.byteSize(); i += 8) {
                src.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 31);
            }
            MemorySegment copy = HugePages.copyOf(src, arena);
            assertEquals(-1L, copy.mismatch(src));
            assertEquals(0, HugePages.allocate(arena, 0).byteSize());
            assertThrows(IllegalArgumentException.class, () -> HugePages.allocate(arena, -1));
        }
    }

    private static long anonHugePagesKb(long address) throws IOException {
        return smapsKb(address, "AnonHugePages:");
    }

    /** The {@code field} line (kB) of the /proc/self/smaps entry holding {@code address}. */
    private static long smapsKb(long address, String field) throws IOException {
        List<String> lines = Files.readAllLines(Path.of("/proc/self/smaps"));
        boolean inside = false;
        for (String line : lines) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) { // the header line of one mapping
                String[] range = line.substring(0, line.indexOf(' ')).split("-");
                long lo = Long.parseUnsignedLong(range[0], 16);
                long hi = Long.parseUnsignedLong(range[1], 16);
                inside = address >= lo && address < hi;
            } else if (inside && line.startsWith(field)) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }
}
