package io.github.semyonsinchenko.safetensors.mmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Violation;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a fault is attributed to a file, a tensor and an argument (no real fault needed). */
class MappedFilesTest {
    @Test
    void aFaultAddressNamesTheFileTheTensorAndTheArgument() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mapping = arena.allocate(1000);
            MemorySegment dst = arena.allocate(100);
            try (MappedFiles.Registration r = MappedFiles.register(mapping, "m.safetensors",
                    off -> off >= 500 ? "second" : "first")) {
                long at = mapping.address() + 600;
                MappedFileFaultException e = MappedFiles.fault("Kernels.convert(BF16_TO_F32)", at, null,
                        "src", mapping.asSlice(400), "dst", dst);
                assertEquals(Violation.FILE_CHANGED_WHILE_MAPPED, e.violation());
                assertEquals("m.safetensors", e.source());
                assertEquals("second", e.tensor());
                assertTrue(e.getMessage().contains("accessing src"), e.getMessage());
                assertTrue(e.getMessage().contains("byte 600 of the file"), e.getMessage());
            }
            // Closed registration: the same address belongs to no file any more.
            MappedFileFaultException e = MappedFiles.fault("Kernels.gather", mapping.address() + 600, null,
                    "table", mapping);
            assertNull(e.tensor());
            assertTrue(e.source().contains("not registered"), e.source());
        }
    }

    @Test
    void withoutAnAddressTheOneRegisteredArgumentIsNamed() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(64);
            MemorySegment b = arena.allocate(64);
            MemorySegment heap = MemorySegment.ofArray(new byte[8]);
            InternalError cause = new InternalError("a fault occurred in an unsafe memory access operation");
            assertTrue(MappedFiles.isMemoryFault(cause));
            assertFalse(MappedFiles.isMemoryFault(new InternalError("something else")));
            try (var ra = MappedFiles.register(a, "a.safetensors", off -> "t" + off)) {
                MappedFileFaultException e = MappedFiles.fault("Kernels.convert(F16_TO_F32)", 0, cause,
                        "src", a.asSlice(8), "dst", heap);
                assertEquals("a.safetensors", e.source());
                assertEquals("t8", e.tensor());
                assertSame(cause, e.getCause().getCause());
                try (var rb = MappedFiles.register(b, "b.safetensors", off -> "u")) {
                    // Two registered arguments and no address: both are named, no tensor.
                    MappedFileFaultException two = MappedFiles.fault("Kernels.gather", 0, cause, "table", a,
                            "dst", b);
                    assertNull(two.tensor());
                    assertEquals("a.safetensors or b.safetensors", two.source());
                    assertTrue(two.getMessage().contains("accessing table or dst"), two.getMessage());
                }
            }
        }
    }

    @Test
    void withoutAnAddressTheMappingWhoseFileShrankIsNamedWithItsFirstLostByte() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment graph = arena.allocate(8192);
            MemorySegment table = arena.allocate(4096);
            MemorySegment text = arena.allocate(1024);
            long[] graphNow = {8192};
            InternalError cause = new InternalError("a fault occurred in an unsafe memory access operation");
            try (var rg = MappedFiles.register(graph, "db/graph.bin", off -> null, () -> graphNow[0]);
                    var rt = MappedFiles.register(table, "db/tables/a.bin", off -> null, () -> 4096);
                    var rx = MappedFiles.register(text, "db/text.bin", off -> null)) {
                List<MemorySegment> all = List.of(graph, table, text);
                assertNull(MappedFiles.truncation("building a train batch", all), "no file is shorter");
                // None shrank: every candidate is named, no byte.
                MappedFileFaultException none = MappedFiles.faultIn("building a train batch", cause, all);
                assertEquals("db/graph.bin or db/tables/a.bin or db/text.bin", none.source());

                graphNow[0] = 1000;
                MappedFileFaultException e = MappedFiles.faultIn("building a train batch", cause, all);
                assertEquals("db/graph.bin", e.source());
                assertSame(cause, e.getCause().getCause());
                assertTrue(e.getMessage().contains("building a train batch faulted; the file is now 1000 bytes,"
                        + " 8192 were mapped: bytes 1000 to 8191 are gone"), e.getMessage());
                MappedFileFaultException cut = MappedFiles.truncation("building a val batch", all);
                assertEquals("db/graph.bin", cut.source());
                assertTrue(cut.getMessage().contains("(building a val batch; the file is now 1000 bytes"),
                        cut.getMessage());
                // A slice of a mapping finds it too.
                assertEquals("db/graph.bin", MappedFiles.faultIn("copying", cause, List.of(graph.asSlice(10, 10)))
                        .source());
                // A size that cannot be read says nothing.
                graphNow[0] = -1;
                assertNull(MappedFiles.truncation("x", all));
            }
        }
    }

    @Test
    void aKernelFaultWithoutAnAddressOnTwoMappingsNamesTheOneWhoseFileShrank() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment table = arena.allocate(4096);
            MemorySegment indices = arena.allocate(64);
            InternalError cause = new InternalError("a fault occurred in an unsafe memory access operation");
            try (var rt = MappedFiles.register(table, "t.bin", off -> null, () -> 100);
                    var ri = MappedFiles.register(indices, "i.bin", off -> null, () -> 64)) {
                MappedFileFaultException e = MappedFiles.fault("Kernels.gather", 0, cause, "table", table,
                        "indices", indices);
                assertEquals("t.bin", e.source());
                assertTrue(e.getMessage().contains("accessing table (it starts at byte 0 of the file)"),
                        e.getMessage());
            }
        }
    }

    @Test
    void aCopyOfIntactMemoryIsAPlainCopy() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(64);
            src.fill((byte) 7);
            byte[] dst = new byte[70];
            try (var r = MappedFiles.register(src, "x.bin", off -> null, () -> 64)) {
                MappedFiles.copy(src, 0, MemorySegment.ofArray(dst), 3, 64);
            }
            assertEquals(0, dst[2]);
            assertEquals(7, dst[3]);
            assertEquals(7, dst[66]);
            assertEquals(0, dst[67]);
        }
    }
}
