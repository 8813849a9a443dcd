package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.HeaderFraming;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.SequencedMap;

/**
 * A safetensors image already in memory (an HTTP response body, a Spark binary column, bytes
 * another library handed over, a file read whole), parsed in place: the same validation as
 * {@link SafetensorsFile#open} (every rule, the image ending exactly where the last tensor does),
 * the same {@link Tensor} API, and no copy of any tensor's bytes. Hugging Face's
 * {@code safetensors.deserialize(bytes)} / Rust's {@code SafeTensors::deserialize(&[u8])}.
 *
 * <h2>Lifetime: the memory is borrowed</h2>
 * A buffer never owns the memory it parses. The {@code byte[]} or {@link MemorySegment} stays the
 * caller's: its arena (or the garbage collector, for an array) decides how long the bytes live, and
 * {@link #close()} only marks this buffer closed (later access throws
 * {@link IllegalStateException}); it frees nothing. Tensors are views of the caller's memory and
 * valid while it is alive and the buffer open; a tensor read after the caller closed the arena
 * throws the JDK's {@link IllegalStateException}, never touches freed memory. Copy a tensor out
 * ({@link Tensor#to}) to keep it longer. A segment of a confined arena can be read only by its
 * thread, as everywhere in FFM. Changing the bytes while the buffer is open changes the tensors
 * (the header is parsed once, from a copy of its bytes, so the layout stays valid).
 *
 * <pre>{@code
 * SafetensorsBuffer image = SafetensorsBuffer.of(responseBytes);           // validated, no copy
 * float[] w = image.tensor("w").toFloatArray();
 * try (Arena arena = Arena.ofConfined()) {
 *     SafetensorsBuffer file = SafetensorsBuffer.read(Path.of("model.safetensors"), arena);  // load_file
 *     ...
 * }
 * }</pre>
 */
public final class SafetensorsBuffer implements AutoCloseable, Iterable<Tensor> {
    private final String source;
    private final Header header;
    private final MemorySegment image;
    private final TensorTable tensors;
    private volatile boolean closed;

    private final TensorOwner owner = new TensorOwner() {
        @Override
        void ensureOpen() {
            SafetensorsBuffer.this.ensureOpen();
        }

        @Override
        String source() {
            return source;
        }

        @Override
        RuntimeException accessFailure(Tensor t, Throwable e) {
            if (closed) {
                return new IllegalStateException(source + " is closed (reading tensor \"" + t.name() + "\")", e);
            }
            return TensorOwner.rethrowOrFault(t, e);
        }
    };

    private SafetensorsBuffer(String source, Header header, MemorySegment image) {
        this.source = source;
        this.header = header;
        this.image = image;
        this.tensors = new TensorTable(owner, header, image, source, "image");
    }

    /**
     * Parses and validates {@code image}, a whole safetensors file in memory (any segment: native,
     * mapped, or a heap array's). The segment is borrowed, viewed read-only, never copied.
     *
     * @param source names the image in error messages (e.g. the URL it came from)
     * @param image the whole file's bytes
     * @return the parsed image
     * @throws io.github.semyonsinchenko.safetensors.format.SafetensorsException if the image breaks a
     *     format rule; the message names the source, the tensor and the rule
     * @throws IOException never otherwise: the image is parsed in memory
     */
    public static SafetensorsBuffer of(MemorySegment image, String source) throws IOException {
        Objects.requireNonNull(image, "image");
        Objects.requireNonNull(source, "source");
        MemorySegment readOnly = image.asReadOnly();
        Header header = HeaderFraming.read((position, buffer) -> MemorySegment.copy(readOnly, ValueLayout.JAVA_BYTE,
                position, buffer, 0, buffer.length), readOnly.byteSize(), source);
        return new SafetensorsBuffer(source, header, readOnly);
    }

    /**
     * {@link #of(MemorySegment, String)} of a byte array (not copied; it must stay unchanged while in use).
     *
     * @param image the whole file's bytes
     * @param source names the image in error messages
     * @return the parsed image
     * @throws io.github.semyonsinchenko.safetensors.format.SafetensorsException if the image breaks a format rule
     * @throws IOException never otherwise: the image is parsed in memory
     */
    public static SafetensorsBuffer of(byte[] image, String source) throws IOException {
        return of(MemorySegment.ofArray(image), source);
    }

    /**
     * {@link #of(byte[], String)} with the source named {@code <bytes>}.
     *
     * @param image the whole file's bytes
     * @return the parsed image
     * @throws io.github.semyonsinchenko.safetensors.format.SafetensorsException if the image breaks a format rule
     * @throws IOException never otherwise: the image is parsed in memory
     */
    public static SafetensorsBuffer of(byte[] image) throws IOException {
        return of(image, "<bytes>");
    }

    /**
     * Reads the whole file into memory owned by {@code arena} (no mapping stays open) and parses it:
     * Hugging Face's {@code load_file}. The tensors live until {@code arena} is closed.
     *
     * @param path the file
     * @param arena owns the memory the file is read into
     * @return the parsed image
     * @throws io.github.semyonsinchenko.safetensors.format.SafetensorsException if the file breaks a
     *     format rule
     * @throws IOException if reading the file fails
     */
    public static SafetensorsBuffer read(Path path, Arena arena) throws IOException {
        Objects.requireNonNull(arena, "arena");
        String source = path.toString();
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            // Validates the header and the file's size before allocating anything for the data.
            Header.read(channel, source);
            long size = channel.size();
            MemorySegment image = arena.allocate(Math.max(1, size), 64).asSlice(0, size);
            var view = image.asByteBuffer();
            channel.position(0);
            while (view.hasRemaining()) {
                if (channel.read(view) < 0) {
                    throw new IOException(String.format(Locale.ROOT, "%s: the file ended after %d of %d bytes",
                            source, view.position(), size));
                }
            }
            return of(image, source);
        }
    }

    /** {@return the name given for the image (a path for {@link #read})} */
    public String source() {
        return source;
    }

    /** {@return the validated header (also available after close)} */
    public Header header() {
        return header;
    }

    /** {@return {@code __metadata__} in file order} */
    public SequencedMap<String, String> metadata() {
        return header.metadata();
    }

    /** {@return the whole image, read-only} */
    public MemorySegment segment() {
        ensureOpen();
        return image;
    }

    /** {@return tensors in offset order} */
    public List<Tensor> tensors() {
        ensureOpen();
        return tensors.list();
    }

    @Override
    public Iterator<Tensor> iterator() {
        return tensors().iterator();
    }

    /** {@return the tensors by name, in offset order (unmodifiable)} */
    public Map<String, Tensor> asMap() {
        ensureOpen();
        return tensors.byName();
    }

    /** {@return the number of tensors} */
    public int size() {
        return tensors.size();
    }

    /**
     * Whether the image has a tensor called {@code name}.
     *
     * @param name a tensor name
     * @return whether the image has it
     */
    public boolean contains(String name) {
        return tensors.contains(name);
    }

    /**
     * The tensor called {@code name}, in O(1).
     *
     * @param name a tensor name
     * @return the tensor
     * @throws NoSuchElementException naming the image when there is no such tensor
     */
    public Tensor tensor(String name) {
        ensureOpen();
        return tensors.get(name);
    }

    /** {@return whether {@link #close()} has not been called} */
    public boolean isOpen() {
        return !closed;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(source + " is closed");
        }
    }

    /** Marks the buffer closed; frees nothing (the memory is the caller's). Idempotent. */
    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "SafetensorsBuffer[" + source + ", " + tensors.size() + " tensors, " + header.fileSize() + " bytes"
                + (closed ? ", closed" : "") + "]";
    }
}
