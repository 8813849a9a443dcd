package io.github.semyonsinchenko.safetensors.format;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.SeekableByteChannel;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;

/**
 * A validated safetensors header: the tensor table in offset order, O(1) lookup by name, and the
 * {@code __metadata__} map in file order. Immutable.
 *
 * <p>The model only; each job has its own class, and the static methods here are shortcuts to them:
 * <ul>
 *   <li>{@link HeaderFraming}: the 8-byte prefix and N header bytes from a channel, a stream or a
 *       positioned input ({@link #read(SeekableByteChannel, String)}, {@link #read(InputStream, long,
 *       String)});</li>
 *   <li>{@code HeaderParser}: the JSON of N bytes ({@link #parse});</li>
 *   <li>{@code HeaderLayout}: the writer's layout, with the header bytes serialized once
 *       ({@link #layout}, {@link #toBytes});</li>
 *   <li>{@code HeaderRules}: every format rule, in the order they are checked.</li>
 * </ul>
 */
public final class Header {
    /** Bytes of the little-endian length prefix. */
    public static final int PREFIX_BYTES = 8;
    /** Largest header the reference accepts; larger ones are rejected before any allocation. */
    public static final long MAX_HEADER_BYTES = 100_000_000L;
    /** Largest shape entry or offset: the official schema's 48-bit size_t. */
    public static final long MAX_DIMENSION = (1L << 48) - 1;
    /** The reserved key of the free-form string map. */
    public static final String METADATA_KEY = "__metadata__";

    private final long headerLength;
    private final List<TensorInfo> tensors;
    private final Map<String, TensorInfo> byName;
    private final SequencedMap<String, String> metadata;
    private final long dataSize;
    /** Prefix + padded JSON as the layout serialized it; null for a header read from a file. */
    private final byte[] serialized;

    /** {@code byName} indexes exactly {@code tensorsInOffsetOrder}; both are owned by the header from now on. */
    Header(long headerLength, List<TensorInfo> tensorsInOffsetOrder, Map<String, TensorInfo> byName,
           SequencedMap<String, String> metadata, byte[] serialized) {
        this.headerLength = headerLength;
        this.tensors = Collections.unmodifiableList(tensorsInOffsetOrder);
        this.byName = byName;
        this.metadata = Collections.unmodifiableSequencedMap(metadata);
        this.dataSize = tensorsInOffsetOrder.isEmpty() ? 0 : tensorsInOffsetOrder.getLast().end();
        this.serialized = serialized;
    }

    /**
     * Parses and validates N header bytes (without the 8-byte prefix).
     *
     * @param headerBytes the N bytes that follow the prefix
     * @param fileSize the whole file's size, or -1 when unknown (then the "data ends at the end of
     *     the file" rule is not checked)
     * @param source names the file or stream in error messages
     * @return the validated header
     * @throws SafetensorsException if the bytes break a format rule, naming the rule ({@link Violation})
     */
    public static Header parse(byte[] headerBytes, long fileSize, String source) throws SafetensorsException {
        return HeaderParser.parse(headerBytes, fileSize, source);
    }

    /**
     * Reads and validates only the header (8 + N bytes) of a channel; see
     * {@link HeaderFraming#read(SeekableByteChannel, String)}.
     *
     * @param channel the file, its size taken as the file size; left positioned after the header
     * @param source names the file in error messages
     * @return the validated header
     * @throws SafetensorsException if the header breaks a format rule
     * @throws IOException if reading the channel fails
     */
    public static Header read(SeekableByteChannel channel, String source) throws IOException {
        return HeaderFraming.read(channel, source);
    }

    /**
     * Reads and validates only the header (8 + N bytes) from a stream, consuming nothing past it; see
     * {@link HeaderFraming#read(InputStream, long, String)}.
     *
     * @param in the stream, positioned at the file's start
     * @param fileSize the file's size, or -1 when unknown (then the end-of-file rules are not checked)
     * @param source names the stream in error messages
     * @return the validated header
     * @throws SafetensorsException if the header breaks a format rule
     * @throws IOException if reading the stream fails
     */
    public static Header read(InputStream in, long fileSize, String source) throws IOException {
        return HeaderFraming.read(in, fileSize, source);
    }

    /**
     * A tensor to lay out: what the writer knows before any data is written.
     *
     * @param name the tensor's name (not {@code __metadata__})
     * @param dtype its element type
     * @param shape its shape; copied, so later changes to the array do not reach the entry
     */
    public record Entry(String name, Dtype dtype, long[] shape) {
        /**
         * Copies {@code shape}; the values are checked when the header is laid out.
         *
         * @param name the tensor's name
         * @param dtype its element type
         * @param shape its shape
         */
        public Entry {
            shape = shape.clone();
        }
    }

    /**
     * Lays tensors out as the reference writer does: by descending dtype alignment ({@link Dtype}
     * declaration order), then by name in UTF-8 byte order, each tensor right after the previous one.
     * The result passes the same validation as a parsed header.
     *
     * @param metadata the {@code __metadata__} strings, written in the map's order; no null key or value
     * @param entries the tensors
     * @param keepInsertionOrder lay tensors out in the order given instead of the reference's order
     *     (descending dtype alignment, then name)
     * @param target names the file being written in error messages
     * @return the header, offsets assigned and bytes serialized
     * @throws SafetensorsException if a name, shape, size or metadata value breaks a format rule
     */
    public static Header layout(Map<String, String> metadata, List<Entry> entries, boolean keepInsertionOrder,
                                String target) throws SafetensorsException {
        return HeaderLayout.layout(metadata, entries, keepInsertionOrder, target);
    }

    /**
     * The most bytes a tensor's entry can add to a written header, with every dimension and offset
     * at its largest: for writers that size their output before the offsets are known.
     *
     * @param name the tensor's name
     * @param rank the number of its dimensions
     * @return an upper bound of the entry's JSON bytes, its separating comma included
     */
    public static long maxEntryBytes(String name, int rank) {
        return HeaderLayout.maxEntryBytes(name, rank);
    }

    /**
     * The header as written to a file: 8-byte little-endian N, then N bytes of compact JSON padded
     * with spaces to a multiple of 8, so the data section starts 8-byte aligned. A laid-out header
     * returns a copy of the bytes serialized by the layout; a parsed one is serialized compactly
     * into its N bytes.
     *
     * @return a new array of 8 + N bytes
     */
    public byte[] toBytes() {
        return serialized != null ? serialized.clone()
                : HeaderLayout.frame(HeaderJson.write(metadata, tensors), headerLength);
    }

    // ---------------------------------------------------------------- accessors

    /** {@return N: the header's length in bytes, padding included} */
    public long headerLength() {
        return headerLength;
    }

    /** {@return where the data section starts in the file: 8 + N} */
    public long dataOffset() {
        return PREFIX_BYTES + headerLength;
    }

    /** {@return bytes in the data section (the last tensor's end)} */
    public long dataSize() {
        return dataSize;
    }

    /** {@return the file size this header implies: 8 + N + data size} */
    public long fileSize() {
        return dataOffset() + dataSize;
    }

    /** {@return the tensors in the order of their offsets, unmodifiable} */
    public List<TensorInfo> tensors() {
        return tensors;
    }

    /**
     * Looks a tensor up by name in O(1).
     *
     * @param name the tensor's name
     * @return its entry, or null when the header has no such tensor
     */
    public TensorInfo tensor(String name) {
        return byName.get(name);
    }

    /**
     * Whether the header has a tensor called {@code name}.
     *
     * @param name the tensor's name
     * @return true if present
     */
    public boolean contains(String name) {
        return byName.containsKey(name);
    }

    /** {@return the number of tensors} */
    public int size() {
        return tensors.size();
    }

    /** {@return {@code __metadata__} in file order, unmodifiable; empty when absent} */
    public SequencedMap<String, String> metadata() {
        return metadata;
    }
}
