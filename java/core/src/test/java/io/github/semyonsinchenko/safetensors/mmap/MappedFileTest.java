package io.github.semyonsinchenko.safetensors.mmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MappedFileTest {
    @TempDir
    Path dir;

    @Test
    void mapsWholeFileReadOnlyAndFailsCleanlyAfterClose() throws IOException {
        Path p = dir.resolve("data.bin");
        Files.write(p, new byte[] {1, 2, 3, 4, 5});
        MappedFile file = MappedFile.open(p);
        MemorySegment seg = file.segment();
        assertEquals(5, file.size());
        assertEquals(5, seg.get(ValueLayout.JAVA_BYTE, 4));
        assertTrue(seg.isReadOnly());
        assertThrows(IllegalArgumentException.class, () -> seg.set(ValueLayout.JAVA_BYTE, 0, (byte) 9));
        file.close();
        file.close(); // idempotent
        assertFalse(file.isOpen());
        assertThrows(IllegalStateException.class, () -> seg.get(ValueLayout.JAVA_BYTE, 0));
        assertThrows(IllegalStateException.class, file::segment);
    }

    @Test
    void currentSizeIsTheMappedFilesEvenAfterARenameOverItsPath() throws IOException {
        Path p = dir.resolve("data.bin");
        Files.write(p, new byte[100]);
        MappedFile file = MappedFile.open(p);
        assertEquals(100, file.currentSize());
        try (var other = java.nio.channels.FileChannel.open(p, java.nio.file.StandardOpenOption.WRITE)) {
            other.truncate(40);
        }
        assertEquals(40, file.currentSize(), "a truncation in place is seen");
        Path replacement = dir.resolve("new.bin");
        Files.write(replacement, new byte[7]);
        Files.move(replacement, p, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        assertEquals(40, file.currentSize(), "a file renamed over the path is another file");
        Thread.currentThread().interrupt();
        try {
            assertEquals(40, file.currentSize(), "an interrupt neither fails the call nor closes the file");
            assertEquals(40, file.currentSize());
        } finally {
            Thread.interrupted();
        }
        file.close();
        assertEquals(-1, file.currentSize());
    }

    @Test
    void emptyFileIsAnEmptySegment() throws IOException {
        Path p = dir.resolve("empty.bin");
        Files.write(p, new byte[0]);
        try (MappedFile file = MappedFile.open(p)) {
            assertEquals(0, file.segment().byteSize());
        }
    }

    @Test
    void missingFileIsAnIoError() {
        assertThrows(NoSuchFileException.class, () -> MappedFile.open(dir.resolve("nope.bin")));
    }

    @Test
    void aConfinedMappingIsReadableOnlyByItsThreadAndNamesItsPartsInFaults() throws Exception {
        Path p = dir.resolve("parts.bin");
        Files.write(p, new byte[64]);
        try (MappedFile file = MappedFile.open(p, MappedFile.Sharing.CONFINED)) {
            MemorySegment seg = file.segment();
            assertEquals(0, seg.get(ValueLayout.JAVA_BYTE, 63));
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> java.util.concurrent.CompletableFuture.supplyAsync(() -> seg.get(ValueLayout.JAVA_BYTE, 0))
                            .get());
            assertTrue(e.getCause() instanceof WrongThreadException, e.toString());
            file.nameParts(offset -> offset < 32 ? "first half" : "second half");
            InternalError fault = new InternalError("a fault occurred in an unsafe memory access operation");
            MappedFileFaultException named = MappedFiles.fault("reading", seg.address() + 40, fault, "src", seg);
            assertEquals(p.toString(), named.source());
            assertEquals("second half", named.tensor());
        }
    }
}
