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
 *   <li>{@link HeaderParser}: the JSON of N bytes ({@link #parse});</li>
 *   <li>{@link HeaderLayout}: the writer's layout, with the header bytes serialized once
 *       ({@link #layout}, {@link #toBytes});</li>
 *   <li>{@link HeaderRules}: every format rule, in the order they are checked.</li>
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
     */
    public static Header parse(byte[] headerBytes, long fileSize, String source) throws SafetensorsException {
        return HeaderParser.parse(headerBytes, fileSize, source);
    }

    /** {@link HeaderFraming#read(SeekableByteChannel, String)}. */
    public static Header read(SeekableByteChannel channel, String source) throws IOException {
        return HeaderFraming.read(channel, source);
    }

    /** {@link HeaderFraming#read(InputStream, long, String)}. */
    public static Header read(InputStream in, long fileSize, String source) throws IOException {
        return HeaderFraming.read(in, fileSize, source);
    }

    /** A tensor to lay out: what the writer knows before any data is written. */
    public record Entry(String name, Dtype dtype, long[] shape) {
        public Entry {
            shape = shape.clone();
        }
    }

    /**
     * Lays tensors out as the reference writer does (see {@link HeaderLayout#layout}). The result
     * passes the same validation as a parsed header.
     */
    public static Header layout(Map<String, String> metadata, List<Entry> entries, boolean keepInsertionOrder,
                                String target) throws SafetensorsException {
        return HeaderLayout.layout(metadata, entries, keepInsertionOrder, target);
    }

    /**
     * The most bytes a tensor's entry can add to a written header (see {@link HeaderLayout}): for
     * writers that size their output before the offsets are known.
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
     */
    public byte[] toBytes() {
        return serialized != null ? serialized.clone()
                : HeaderLayout.frame(HeaderJson.write(metadata, tensors), headerLength);
    }

    // ---------------------------------------------------------------- accessors

    /** N: the header's length in bytes, padding included. */
    public long headerLength() {
        return headerLength;
    }

    /** Where the data section starts in the file: 8 + N. */
    public long dataOffset() {
        return PREFIX_BYTES + headerLength;
    }

    /** Bytes in the data section (the last tensor's end). */
    public long dataSize() {
        return dataSize;
    }

    /** The file size this header implies: 8 + N + data size. */
    public long fileSize() {
        return dataOffset() + dataSize;
    }

    /** The tensors in the order of their offsets. */
    public List<TensorInfo> tensors() {
        return tensors;
    }

    /** O(1) lookup; null when absent. */
    public TensorInfo tensor(String name) {
        return byName.get(name);
    }

    public boolean contains(String name) {
        return byName.containsKey(name);
    }

    public int size() {
        return tensors.size();
    }

    /** {@code __metadata__} in file order; empty when absent. */
    public SequencedMap<String, String> metadata() {
        return metadata;
    }
}
