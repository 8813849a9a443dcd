package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import io.github.semyonsinchenko.safetensors.format.SafetensorsException;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.format.Violation;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import java.util.UUID;

/**
 * Plans a safetensors file, then streams it: first the header (with {@code __metadata__}, padded
 * with spaces to a multiple of 8), then each tensor's bytes straight from its source. The file is
 * never assembled in memory; heap arrays pass through one small staging buffer.
 *
 * <p>Tensors are laid out like the reference writer (descending dtype alignment, then name) unless
 * {@link #keepInsertionOrder(boolean)}. Every layout rule is checked by {@link Header#layout}, the
 * same code that validates files on read.
 *
 * <p>{@link #write(Path)} is atomic: it writes a sibling temporary file, forces it to disk and
 * renames it over the target, so readers (including live mappings of the old file) never see a
 * partial file, and a failure leaves nothing behind.
 *
 * <pre>{@code
 * new SafetensorsWriter()
 *     .metadata("format", "pt")
 *     .add("weight", Dtype.F32, new long[] {2, 2}, new float[] {1, 2, 3, 4})
 *     .add("embeddings", Dtype.BF16, new long[] {vocab, 256}, segment)
 *     .write(Path.of("model.safetensors"));
 * }</pre>
 *
 * <p>A writer is not thread-safe; sources must stay unchanged until the file is written. Adding
 * refuses only nulls and a name added twice; the format's rules (names, shapes, sizes, metadata)
 * are checked when the header is laid out, by {@link #header()} and every {@code write}.
 */
public final class SafetensorsWriter {

    /** Produces a tensor's bytes on demand; must write exactly the tensor's byte size. */
    @FunctionalInterface
    public interface ByteSource {
        /**
         * Writes the tensor's little-endian bytes.
         *
         * @param out where the bytes go; not to be closed
         * @throws IOException if producing or writing the bytes fails; a byte count other than the
         *     tensor's size fails the write too
         */
        void writeTo(WritableByteChannel out) throws IOException;
    }

    private static final int STAGING_BYTES = 4 << 20;
    private static final long MAX_WRITE_CHUNK = 1L << 30;

    private final SequencedMap<String, String> metadata = new LinkedHashMap<>();
    private final List<Header.Entry> entries = new ArrayList<>();
    private final Map<String, Object> sources = new HashMap<>();
    private boolean keepInsertionOrder;

    /** An empty writer: no metadata, no tensors, the reference's layout order. */
    public SafetensorsWriter() {
    }

    /**
     * Adds a {@code __metadata__} entry, replacing an earlier value of the same key.
     *
     * @param key the key
     * @param value the value
     * @return this writer
     */
    public SafetensorsWriter metadata(String key, String value) {
        metadata.put(key, value);
        return this;
    }

    /**
     * Adds all entries to {@code __metadata__}, in the map's iteration order.
     *
     * @param entries the entries; a null key or value fails the write
     * @return this writer
     */
    public SafetensorsWriter metadata(Map<String, String> entries) {
        metadata.putAll(entries);
        return this;
    }

    /**
     * Whether tensors keep the order they were added in instead of the reference's alignment order.
     *
     * @param keep true to keep insertion order
     * @return this writer
     */
    public SafetensorsWriter keepInsertionOrder(boolean keep) {
        this.keepInsertionOrder = keep;
        return this;
    }

    /**
     * Adds a tensor whose little-endian bytes are in {@code data} (any segment: mapped, native or heap).
     *
     * @param name the tensor's name, unique in the file
     * @param dtype its element type
     * @param shape its shape
     * @param data exactly the tensor's bytes; read when the file is written
     * @return this writer
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a tensor of that name was already added
     */
    public SafetensorsWriter add(String name, Dtype dtype, long[] shape, MemorySegment data) {
        return put(name, dtype, shape, data);
    }

    /**
     * Adds a tensor whose bytes are written by {@code source} when the file is streamed.
     *
     * @param name the tensor's name, unique in the file
     * @param dtype its element type
     * @param shape its shape
     * @param source writes exactly the tensor's bytes, once per write
     * @return this writer
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a tensor of that name was already added
     */
    public SafetensorsWriter add(String name, Dtype dtype, long[] shape, ByteSource source) {
        return put(name, dtype, shape, source);
    }

    /**
     * Adds a tensor from raw little-endian bytes, e.g. BOOL, U8, I8, F8_*, F4 or F6 packed data.
     *
     * @param name the tensor's name, unique in the file
     * @param dtype its element type
     * @param shape its shape
     * @param data the bytes, read when the file is written
     * @return this writer
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a tensor of that name was already added
     */
    public SafetensorsWriter add(String name, Dtype dtype, long[] shape, byte[] data) {
        return put(name, dtype, shape, new HeapArray(MemorySegment.ofArray(data), ValueLayout.JAVA_BYTE));
    }

    /**
     * Adds a tensor of 16-bit elements (I16, U16, or F16/BF16 bit patterns).
     *
     * @param name the tensor's name, unique in the file
     * @param dtype its element type
     * @param shape its shape
     * @param data the elements, written little-endian
     * @return this writer
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a tensor of that name was already added
     */
    public SafetensorsWriter add(String name, Dtype dtype, long[] shape, short[] data) {
        return put(name, dtype, shape, new HeapArray(MemorySegment.ofArray(data), ValueLayout.JAVA_SHORT));
    }

    /**
     * Adds a tensor of 32-bit integers (I32, U32) or other 32-bit patterns.
     *
     * @param name the tensor's name, unique in the file
     * @param dtype its element type
     * @param shape its shape
     * @param data the elements, written little-endian
     * @return this writer
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a tensor of that name was already added
     */
    public SafetensorsWriter add(String name, Dtype dtype, long[] shape, int[] data) {
        return put(name, dtype, shape, new HeapArray(MemorySegment.ofArray(data), ValueLayout.JAVA_INT));
    }

    /**
     * Adds a tensor of 64-bit integers (I64, U64) or other 64-bit patterns.
     *
     * @param name the tensor's name, unique in the file
     * @param dtype its element type
     * @param shape its shape
     * @param data the elements, written little-endian
     * @return this writer
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a tensor of that name was already added
     */
    public SafetensorsWriter add(String name, Dtype dtype, long[] shape, long[] data) {
        return put(name, dtype, shape, new HeapArray(MemorySegment.ofArray(data), ValueLayout.JAVA_LONG));
    }

    /**
     * Adds a tensor of F32 values.
     *
     * @param name the tensor's name, unique in the file
     * @param dtype its element type
     * @param shape its shape
     * @param data the elements, written little-endian
     * @return this writer
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a tensor of that name was already added
     */
    public SafetensorsWriter add(String name, Dtype dtype, long[] shape, float[] data) {
        return put(name, dtype, shape, new HeapArray(MemorySegment.ofArray(data), ValueLayout.JAVA_FLOAT));
    }

    /**
     * Adds a tensor of F64 values.
     *
     * @param name the tensor's name, unique in the file
     * @param dtype its element type
     * @param shape its shape
     * @param data the elements, written little-endian
     * @return this writer
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a tensor of that name was already added
     */
    public SafetensorsWriter add(String name, Dtype dtype, long[] shape, double[] data) {
        return put(name, dtype, shape, new HeapArray(MemorySegment.ofArray(data), ValueLayout.JAVA_DOUBLE));
    }

    private SafetensorsWriter put(String name, Dtype dtype, long[] shape, Object source) {
        if (name == null || dtype == null || shape == null || source == null) {
            throw new NullPointerException("name, dtype, shape and data must not be null (tensor \"" + name + "\")");
        }
        if (sources.putIfAbsent(name, source) != null) {
            throw new IllegalArgumentException("tensor \"" + name + "\" was already added");
        }
        entries.add(new Header.Entry(name, dtype, shape));
        return this;
    }

    /**
     * The header this writer will produce, validated; also checks every source's byte length.
     *
     * @return the laid-out header
     * @throws SafetensorsException if a name, shape or metadata entry breaks a format rule, or a
     *     source's length differs from what its dtype and shape need
     */
    public Header header() throws SafetensorsException {
        return header("<writer>");
    }

    private Header header(String target) throws SafetensorsException {
        Header header = Header.layout(metadata, entries, keepInsertionOrder, target);
        for (TensorInfo t : header.tensors()) {
            Object src = sources.get(t.name());
            long have = switch (src) {
                case MemorySegment s -> s.byteSize();
                case HeapArray h -> h.segment().byteSize();
                default -> t.byteSize(); // a ByteSource is checked as it streams
            };
            if (have != t.byteSize()) {
                throw new SafetensorsException(Violation.SIZE_MISMATCH, target, t.name(),
                        "the data has " + have + " bytes but " + t.dtype() + " " + Arrays.toString(t.shape())
                                + " needs " + t.byteSize());
            }
        }
        return header;
    }

    /**
     * Writes the file atomically: a sibling temporary file, pre-sized, forced to disk, then renamed
     * over {@code path}. On failure the temporary file is deleted and {@code path} is untouched.
     *
     * @param path the file to write; its directory must exist
     * @return the header written
     * @throws SafetensorsException if the layout breaks a format rule
     * @throws IOException if writing fails, or the file system cannot rename atomically
     */
    public Header write(Path path) throws IOException {
        Path target = path.toAbsolutePath();
        Header header = header(target.toString());
        Path dir = target.getParent();
        Path tmp = dir.resolve("." + target.getFileName() + "." + UUID.randomUUID() + ".tmp");
        boolean success = false;
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                // Pre-size: fail early on quota limits and let the file system allocate in one go.
                if (header.fileSize() > 0) {
                    ch.write(ByteBuffer.allocate(1), header.fileSize() - 1);
                    ch.position(0);
                }
                stream(header, new ChannelSink(ch), target.toString());
                ch.force(true);
            }
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException(target + ": the file system cannot rename atomically; not writing in place", e);
            }
            success = true;
            syncDirectory(dir);
            return header;
        } finally {
            if (!success) {
                Files.deleteIfExists(tmp);
            }
        }
    }

    /**
     * Streams the file into {@code out}; not atomic.
     *
     * @param out where the file goes; left open
     * @return the header written
     * @throws SafetensorsException if the layout breaks a format rule
     * @throws IOException if writing fails
     */
    public Header write(WritableByteChannel out) throws IOException {
        Header header = header("<channel>");
        stream(header, new ChannelSink(out), "<channel>");
        return header;
    }

    /**
     * Streams the file into {@code out}, then flushes it; not atomic.
     *
     * @param out where the file goes; left open
     * @return the header written
     * @throws SafetensorsException if the layout breaks a format rule
     * @throws IOException if writing fails
     */
    public Header write(OutputStream out) throws IOException {
        Header header = header("<stream>");
        stream(header, new StreamSink(out), "<stream>");
        out.flush();
        return header;
    }

    private void stream(Header header, Sink sink, String target) throws IOException {
        sink.write(MemorySegment.ofArray(header.toBytes()));
        MemorySegment staging = null;
        for (TensorInfo t : header.tensors()) {
            Object src = sources.get(t.name());
            switch (src) {
                case MemorySegment s -> sink.write(s);
                case HeapArray h -> {
                    if (staging == null) {
                        staging = MemorySegment.ofArray(new byte[STAGING_BYTES]);
                    }
                    h.writeLittleEndian(sink, staging);
                }
                case ByteSource bs -> {
                    CountingChannel counter = new CountingChannel(sink);
                    bs.writeTo(counter);
                    if (counter.count != t.byteSize()) {
                        throw new SafetensorsException(Violation.SIZE_MISMATCH, target, t.name(),
                                "the source wrote " + counter.count + " bytes, the tensor needs " + t.byteSize());
                    }
                }
                default -> throw new IllegalStateException("unknown source " + src);
            }
        }
        sink.finish();
    }

    private static void syncDirectory(Path dir) {
        // Makes the rename durable on Linux; some platforms cannot open a directory, which is fine.
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException | UnsupportedOperationException ignored) {
            // best effort
        }
    }

    /** A Java array whose elements are written little-endian whatever the platform's order. */
    private record HeapArray(MemorySegment segment, ValueLayout element) {
        void writeLittleEndian(Sink sink, MemorySegment staging) throws IOException {
            long elemSize = element.byteSize();
            long perChunk = staging.byteSize() / elemSize;
            long total = segment.byteSize() / elemSize;
            // The staging buffer is a byte[] segment (alignment 1): the target layout must be unaligned.
            ValueLayout le = LittleEndian.of(element);
            for (long i = 0; i < total; i += perChunk) {
                long n = Math.min(perChunk, total - i);
                MemorySegment.copy(segment, element, i * elemSize, staging, le, 0, n);
                sink.write(staging.asSlice(0, n * elemSize));
            }
        }
    }

    /** Where the bytes go. */
    private interface Sink {
        void write(MemorySegment bytes) throws IOException;

        /** Writes out anything held back; called once after the last piece. */
        default void finish() throws IOException {}
    }

    /**
     * Writes to a channel. Pieces under {@link #GATHER_BELOW} bytes (small tensors, the header) are
     * gathered in one direct buffer and written together, so a shard of many small tensors costs a
     * few large write calls instead of one system call per tensor; larger pieces are written
     * straight from their own memory.
     */
    private static final class ChannelSink implements Sink {
        static final int GATHER_BYTES = 1 << 20;
        static final int GATHER_BELOW = 64 << 10;

        private final WritableByteChannel channel;
        private ByteBuffer gathered;         // direct, allocated on first use
        private MemorySegment gatheredBytes; // the same memory, whole
        private int filled;

        ChannelSink(WritableByteChannel channel) {
            this.channel = channel;
        }

        @Override
        public void write(MemorySegment bytes) throws IOException {
            long size = bytes.byteSize();
            if (size < GATHER_BELOW) {
                if (gathered == null) {
                    gathered = ByteBuffer.allocateDirect(GATHER_BYTES);
                    gatheredBytes = MemorySegment.ofBuffer(gathered);
                } else if (GATHER_BYTES - filled < size) {
                    finish();
                }
                MemorySegment.copy(bytes, 0, gatheredBytes, filled, size);
                filled += (int) size;
                return;
            }
            finish();
            for (long off = 0; off < size; off += MAX_WRITE_CHUNK) {
                writeFully(bytes.asSlice(off, Math.min(MAX_WRITE_CHUNK, size - off)).asByteBuffer());
            }
        }

        @Override
        public void finish() throws IOException {
            if (filled > 0) {
                writeFully(gathered.clear().limit(filled));
                filled = 0;
            }
        }

        private void writeFully(ByteBuffer buf) throws IOException {
            while (buf.hasRemaining()) {
                channel.write(buf);
            }
        }
    }

    private static final class StreamSink implements Sink {
        private final OutputStream out;
        private byte[] buffer;

        StreamSink(OutputStream out) {
            this.out = out;
        }

        @Override
        public void write(MemorySegment bytes) throws IOException {
            if (bytes.isNative() || bytes.heapBase().isEmpty() || !(bytes.heapBase().get() instanceof byte[])) {
                if (buffer == null) {
                    buffer = new byte[1 << 20];
                }
                for (long off = 0; off < bytes.byteSize(); off += buffer.length) {
                    int n = (int) Math.min(buffer.length, bytes.byteSize() - off);
                    MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, off, buffer, 0, n);
                    out.write(buffer, 0, n);
                }
            } else {
                byte[] array = (byte[]) bytes.heapBase().get();
                out.write(array, (int) bytes.address(), (int) bytes.byteSize());
            }
        }
    }

    /** Counts what a {@link ByteSource} writes, so a short or long tensor is caught. */
    private static final class CountingChannel implements WritableByteChannel {
        private final Sink sink;
        long count;

        CountingChannel(Sink sink) {
            this.sink = sink;
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            int n = src.remaining();
            sink.write(MemorySegment.ofBuffer(src));
            src.position(src.limit());
            count += n;
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {}
    }
}
