package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.kernels.MappedFiles;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.RandomAccessFile;
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
 * faults on it (the file truncated by another process) names this file, as for a safetensors file;
 * the file stays open too, so that its current length can be compared with the mapping's (see
 * {@link MappedFiles#faultIn} and {@link MappedFiles#truncation}).
 */
public final class MappedFile implements AutoCloseable {

    private final Path path;
    private final RandomAccessFile file;
    private final Arena arena;
    private final MemorySegment segment;
    private final MappedFiles.Registration registration;
    private volatile boolean closed;

    private MappedFile(Path path, RandomAccessFile file, Arena arena, MemorySegment segment) {
        this.path = path;
        this.file = file;
        this.arena = arena;
        this.segment = segment;
        this.registration = MappedFiles.register(segment, path.toString(), offset -> null, this::currentSize);
    }

    /** Maps all of {@code path} read-only; the size is taken once, when the file is opened. */
    public static MappedFile open(Path path) throws IOException {
        RandomAccessFile raf = openForReading(path);
        Arena arena = null;
        boolean success = false;
        try {
            long size = raf.length();
            arena = Arena.ofShared();
            try {
                MemorySegment segment = size == 0 ? arena.allocate(0)
                        : raf.getChannel().map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
                MappedFile file = new MappedFile(path, raf, arena, segment.asReadOnly());
                success = true;
                return file;
            } catch (IOException e) {
                throw new IOException(path + ": mapping " + size + " bytes failed (check free address space and"
                        + " vm.max_map_count): " + e.getMessage(), e);
            }
        } finally {
            if (!success) {
                if (arena != null) {
                    arena.close();
                }
                raf.close();
            }
        }
    }

    /**
     * A {@link RandomAccessFile} (whose {@code length()} an interrupt cannot close), failing with the
     * NIO exceptions ({@code NoSuchFileException}, {@code AccessDeniedException}) that name the
     * problem, like {@code FileChannel.open}.
     */
    private static RandomAccessFile openForReading(Path path) throws IOException {
        try {
            return new RandomAccessFile(path.toFile(), "r");
        } catch (FileNotFoundException e) {
            FileChannel.open(path, StandardOpenOption.READ).close(); // throws the precise exception
            throw e;
        }
    }

    /**
     * {@return the mapped file's length now, or -1 when it cannot be read (e.g. after close())}
     * It is the length of the file this object mapped, even after another file was renamed over
     * its path. Shorter than {@link #size()} means the file was truncated: pages past its new end
     * are gone. One {@code fstat}; unlike a {@code FileChannel}'s, it is not cut short (and the file
     * closed) by an interrupt of the calling thread.
     */
    public long currentSize() {
        try {
            return file.length();
        } catch (IOException e) {
            return -1;
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
            try {
                file.close();
            } catch (IOException e) {
                // a read-only channel: nothing was written that could be lost
            }
        }
    }

    @Override
    public String toString() {
        return "MappedFile[" + path + ", " + segment.byteSize() + " bytes" + (closed ? ", closed" : "") + "]";
    }
}
