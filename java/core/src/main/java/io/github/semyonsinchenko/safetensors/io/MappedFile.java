package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.kernels.MappedFiles;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A whole file mapped read-only, for formats other than safetensors (e.g. the sampler's database
 * files). Owns exactly one shared {@link Arena}, like {@link SafetensorsFile}: the segment is a
 * borrowed view, readable from any thread, and every access after {@link #close()} throws
 * {@link IllegalStateException} instead of touching unmapped memory. An empty file maps to an
 * empty segment. While open, the mapping is registered with {@link MappedFiles}, so a kernel that
 * faults on it (the file truncated by another process) names this file, as for a safetensors file.
 */
public final class MappedFile implements AutoCloseable {

    private final Path path;
    private final Arena arena;
    private final MemorySegment segment;
    private final MappedFiles.Registration registration;
    private volatile boolean closed;

    private MappedFile(Path path, Arena arena, MemorySegment segment) {
        this.path = path;
        this.arena = arena;
        this.segment = segment;
        this.registration = MappedFiles.register(segment, path.toString(), offset -> null);
    }

    /** Maps all of {@code path} read-only; the size is taken once, when the file is opened. */
    public static MappedFile open(Path path) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = channel.size();
            Arena arena = Arena.ofShared();
            boolean success = false;
            try {
                MemorySegment segment = size == 0 ? arena.allocate(0)
                        : channel.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
                MappedFile file = new MappedFile(path, arena, segment.asReadOnly());
                success = true;
                return file;
            } catch (IOException e) {
                throw new IOException(path + ": mapping " + size + " bytes failed (check free address space and"
                        + " vm.max_map_count): " + e.getMessage(), e);
            } finally {
                if (!success) {
                    arena.close();
                }
            }
        }
    }

    public Path path() {
        return path;
    }

    /** The mapping (read-only); valid until {@link #close()}. */
    public MemorySegment segment() {
        if (closed) {
            throw new IllegalStateException(path + ": the file is closed");
        }
        return segment;
    }

    public long size() {
        return segment.byteSize();
    }

    public boolean isOpen() {
        return !closed;
    }

    /** Unmaps the file. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            registration.close();
            arena.close();
            closed = true;
        }
    }

    @Override
    public String toString() {
        return "MappedFile[" + path + ", " + segment.byteSize() + " bytes" + (closed ? ", closed" : "") + "]";
    }
}
