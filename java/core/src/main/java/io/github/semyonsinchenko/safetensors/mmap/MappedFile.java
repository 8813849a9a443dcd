package io.github.semyonsinchenko.safetensors.mmap;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.function.LongFunction;

/**
 * A whole file mapped read-only: the one place that maps files, owns the mapping's {@link Arena}
 * and closes it. The safetensors reader ({@code SafetensorsFile}) and the sampler's database wrap
 * it; everything they hand out is a borrowed view of {@link #segment()}, with no {@code close()}.
 *
 * <ul>
 *   <li>Exactly one arena per file, created by {@link #open} and closed by {@link #close()}, which
 *       unmaps at once (no waiting for GC; files over 2 GiB map as one segment). If opening fails
 *       partway, the arena and the file are closed before the exception leaves.</li>
 *   <li>Every access to the segment or a slice of it after {@link #close()} throws
 *       {@link IllegalStateException} (the JDK checks each access against the arena) instead of
 *       touching unmapped memory. {@code close()} is idempotent.</li>
 *   <li>While open, the mapping is registered with {@link MappedFiles}, so a kernel or a guarded
 *       copy that faults on it (the file truncated by another process) names this file, and the
 *       part of it given by {@link #nameParts}; the file stays open, so that its current length can
 *       be compared with the mapping's ({@link #currentSize()}, {@link MappedFiles#truncation}).</li>
 * </ul>
 * An empty file maps to an empty segment.
 */
public final class MappedFile implements AutoCloseable {

    /** Which threads may use the mapping. */
    public enum Sharing {
        /** Any thread may read; closing does a JVM-wide handshake (microseconds to milliseconds). */
        SHARED,
        /** Only the opening thread may read or close; closing is cheap. */
        CONFINED
    }

    private static final LongFunction<String> NO_PARTS = offset -> null;

    private final Path path;
    private final RandomAccessFile file;
    private final Arena arena;
    private final MemorySegment segment;
    private final MappedFiles.Registration registration;
    private volatile LongFunction<String> partAt = NO_PARTS;
    private volatile boolean closed;

    private MappedFile(Path path, RandomAccessFile file, Arena arena, MemorySegment segment) {
        this.path = path;
        this.file = file;
        this.arena = arena;
        this.segment = segment;
        this.registration = MappedFiles.register(segment, path.toString(), offset -> partAt.apply(offset),
                this::currentSize);
    }

    /**
     * Maps all of {@code path} read-only with a {@link Sharing#SHARED} arena; the size is taken once,
     * when the file is opened.
     *
     * @param path the file
     * @return the open mapping
     * @throws IOException if the file cannot be opened or mapped (the message names the file)
     */
    public static MappedFile open(Path path) throws IOException {
        return open(path, Sharing.SHARED);
    }

    /**
     * Maps all of {@code path} read-only; the size is taken once, when the file is opened.
     *
     * @param path the file
     * @param sharing which threads may read the mapping and close it
     * @return the open mapping
     * @throws IOException if the file cannot be opened or mapped (the message names the file)
     */
    public static MappedFile open(Path path, Sharing sharing) throws IOException {
        Objects.requireNonNull(sharing, "sharing");
        RandomAccessFile raf = openForReading(path);
        Arena arena = null;
        boolean success = false;
        try {
            long size = raf.length();
            arena = sharing == Sharing.CONFINED ? Arena.ofConfined() : Arena.ofShared();
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
     * Says which part of the file (for a safetensors file, the tensor) holds a byte offset, so that a
     * fault or a truncation reported for this mapping names it too.
     *
     * @param partAt the part's name at a byte offset of the file, or null where there is none
     */
    public void nameParts(LongFunction<String> partAt) {
        this.partAt = Objects.requireNonNull(partAt, "partAt");
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

    /** {@return the file, as opened} */
    public Path path() {
        return path;
    }

    /**
     * The mapping (read-only); valid until {@link #close()}.
     *
     * @return the whole file's bytes
     * @throws IllegalStateException after {@link #close()}
     */
    public MemorySegment segment() {
        if (closed) {
            throw new IllegalStateException(path + ": the file is closed");
        }
        return segment;
    }

    /** {@return the bytes mapped: the file's length when it was opened} */
    public long size() {
        return segment.byteSize();
    }

    /** {@return whether {@link #close()} has not been called} */
    public boolean isOpen() {
        return !closed;
    }

    /** Unmaps the file. Idempotent; with a confined arena, only the opening thread may call it. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            arena.close();
            closed = true;
            registration.close();
            try {
                file.close();
            } catch (IOException e) {
                // a read-only file: nothing was written that could be lost
            }
        }
    }

    @Override
    public String toString() {
        return "MappedFile[" + path + ", " + segment.byteSize() + " bytes" + (closed ? ", closed" : "") + "]";
    }
}
