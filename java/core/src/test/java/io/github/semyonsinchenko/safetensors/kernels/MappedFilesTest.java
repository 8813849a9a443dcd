package io.github.semyonsinchenko.safetensors.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.MappedFileFaultException;
import io.github.semyonsinchenko.safetensors.format.Violation;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
}
