package io.github.semyonsinchenko.safetensors.format;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SeekableByteChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;

/**
 * A validated safetensors header: the tensor table in offset order, O(1) lookup by name, and the
 * {@code __metadata__} map in file order.
 *
 * <p>This is the one place where the format's rules live. The reader, the header-only readers
 * for channels and streams, and the writer (through {@link #layout}) all go through it, so the
 * writer cannot produce what the reader would reject. The rules, checked in this order, are the
 * reference implementation's plus a rejection of duplicate keys (the reference keeps the last):
 * <ol>
 *   <li>an 8-byte little-endian prefix N, with N &lt;= {@value #MAX_HEADER_BYTES} and 8 + N within
 *       the file;</li>
 *   <li>the N bytes are UTF-8 holding one JSON object, padded only with 0x20 on either side;</li>
 *   <li>{@code __metadata__}, if present, maps strings to strings;</li>
 *   <li>every other entry has exactly {@code dtype} (a known {@link Dtype}), {@code shape}
 *       (integers in [0, 2^48-1]) and {@code data_offsets} ([begin, end], begin &lt;= end);</li>
 *   <li>element count times bits does not overflow, is a multiple of 8, and equals
 *       (end - begin) * 8;</li>
 *   <li>sorted by offset, the tensors tile the data section from 0 with no gap or overlap, and the
 *       data section ends exactly at the end of the file.</li>
 * </ol>
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

    private static final Comparator<TensorInfo> OFFSET_ORDER = Comparator.comparingLong(TensorInfo::begin)
            .thenComparingLong(TensorInfo::end)
            .thenComparing(TensorInfo::name);

    private final long headerLength;
    private final List<TensorInfo> tensors;
    private final Map<String, TensorInfo> byName;
    private final SequencedMap<String, String> metadata;
    private final long dataSize;

    private Header(long headerLength, List<TensorInfo> tensorsInOffsetOrder, SequencedMap<String, String> metadata) {
        this.headerLength = headerLength;
        this.tensors = Collections.unmodifiableList(tensorsInOffsetOrder);
        Map<String, TensorInfo> index = HashMap.newHashMap(tensorsInOffsetOrder.size());
        for (TensorInfo t : tensorsInOffsetOrder) {
            index.put(t.name(), t);
        }
        this.byName = index;
        this.metadata = Collections.unmodifiableSequencedMap(metadata);
        this.dataSize = tensorsInOffsetOrder.isEmpty() ? 0 : tensorsInOffsetOrder.getLast().end();
    }

    // ---------------------------------------------------------------- reading

    /**
     * Parses and validates N header bytes (without the 8-byte prefix).
     *
     * @param headerBytes the N bytes that follow the prefix
     * @param fileSize the whole file's size, or -1 when unknown (then the "data ends at the end of
     *     the file" rule is not checked)
     * @param source names the file or stream in error messages
     */
    public static Header parse(byte[] headerBytes, long fileSize, String source) throws SafetensorsException {
        checkLength(headerBytes.length, fileSize, source);
        List<TensorInfo> tensors = new ArrayList<>();
        SequencedMap<String, String> metadata = new LinkedHashMap<>();
        HeaderParser.parse(headerBytes, source, tensors, metadata);
        tensors.sort(OFFSET_ORDER);
        long dataSize = checkTiling(tensors, source);
        if (fileSize >= 0) {
            checkFileSize(headerBytes.length, dataSize, fileSize, source);
        }
        return new Header(headerBytes.length, tensors, metadata);
    }

    /**
     * Reads and validates only the header (8 + N bytes) of a channel positioned anywhere; the
     * channel's size is the file size. The channel's position is left after the header.
     */
    public static Header read(SeekableByteChannel channel, String source) throws IOException {
        long fileSize = channel.size();
        channel.position(0);
        ByteBuffer prefix = ByteBuffer.allocate(PREFIX_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        if (readFully(channel, prefix) < PREFIX_BYTES) {
            throw new SafetensorsException(Violation.HEADER_LENGTH_TRUNCATED, source, null,
                    "the file has only " + fileSize + " bytes");
        }
        long n = prefix.getLong(0);
        checkLength(n, fileSize, source);
        ByteBuffer header = ByteBuffer.allocate((int) n);
        if (readFully(channel, header) < n) {
            throw new SafetensorsException(Violation.HEADER_PAST_EOF, source, null,
                    "the channel ended before the " + n + " header bytes");
        }
        return parse(header.array(), fileSize, source);
    }

    /**
     * Reads and validates only the header (8 + N bytes) from a stream; nothing past the header is
     * consumed.
     *
     * @param fileSize the total size if known (enables the end-of-file rules), else -1
     */
    public static Header read(InputStream in, long fileSize, String source) throws IOException {
        byte[] prefix = in.readNBytes(PREFIX_BYTES);
        if (prefix.length < PREFIX_BYTES) {
            throw new SafetensorsException(Violation.HEADER_LENGTH_TRUNCATED, source, null,
                    "the stream has only " + prefix.length + " bytes");
        }
        long n = ByteBuffer.wrap(prefix).order(ByteOrder.LITTLE_ENDIAN).getLong();
        checkLength(n, fileSize, source);
        // readNBytes grows its buffer as data arrives, so a lying N on a short stream costs little.
        byte[] header = in.readNBytes((int) n);
        if (header.length < n) {
            throw new SafetensorsException(Violation.HEADER_PAST_EOF, source, null,
                    "the stream ended after " + header.length + " of " + n + " header bytes");
        }
        return parse(header, fileSize, source);
    }

    /** Checks N (read as unsigned) against the limit and the file size. */
    static void checkLength(long n, long fileSize, String source) throws SafetensorsException {
        if (n < 0 || n > MAX_HEADER_BYTES) {
            throw new SafetensorsException(Violation.HEADER_TOO_LARGE, source, null,
                    "N = " + Long.toUnsignedString(n));
        }
        if (fileSize >= 0 && PREFIX_BYTES + n > fileSize) {
            throw new SafetensorsException(Violation.HEADER_PAST_EOF, source, null,
                    "8 + N = " + (PREFIX_BYTES + n) + " but the file has " + fileSize + " bytes");
        }
    }

    private static int readFully(SeekableByteChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                break;
            }
        }
        return buffer.position();
    }

    /** Offsets sorted ascending must tile [0, last end) exactly; returns the data section size. */
    private static long checkTiling(List<TensorInfo> sorted, String source) throws SafetensorsException {
        long expected = 0;
        for (TensorInfo t : sorted) {
            if (t.begin() > expected) {
                throw new SafetensorsException(Violation.OFFSET_GAP, source, t.name(),
                        "begins at " + t.begin() + " but the previous tensor ends at " + expected);
            }
            if (t.begin() < expected) {
                throw new SafetensorsException(Violation.OFFSET_OVERLAP, source, t.name(),
                        "begins at " + t.begin() + " but the previous tensor ends at " + expected);
            }
            expected = t.end();
        }
        return expected;
    }

    private static void checkFileSize(long n, long dataSize, long fileSize, String source)
            throws SafetensorsException {
        long expected = PREFIX_BYTES + n + dataSize;
        if (fileSize < expected) {
            throw new SafetensorsException(Violation.DATA_TRUNCATED, source, null,
                    "header and data need " + expected + " bytes, the file has " + fileSize);
        }
        if (fileSize > expected) {
            throw new SafetensorsException(Violation.TRAILING_BYTES, source, null,
                    (fileSize - expected) + " bytes after the data section, which ends at " + expected);
        }
    }

    // ---------------------------------------------------------------- writing

    /** A tensor to lay out: what the writer knows before any data is written. */
    public record Entry(String name, Dtype dtype, long[] shape) {
        public Entry {
            shape = shape.clone();
        }
    }

    /**
     * Lays tensors out as the reference writer does: by descending dtype alignment
     * ({@link Dtype} declaration order), then by name (UTF-8 byte order, as Rust compares strings),
     * unless {@code keepInsertionOrder}. The result passes the same validation as a parsed header.
     */
    public static Header layout(Map<String, String> metadata, List<Entry> entries, boolean keepInsertionOrder,
                                String target) throws SafetensorsException {
        List<Entry> ordered = new ArrayList<>(entries);
        if (!keepInsertionOrder) {
            ordered.sort(Comparator.comparing(Entry::dtype, Comparator.reverseOrder())
                    .thenComparing(Entry::name, Header::compareUtf8));
        }
        SequencedMap<String, String> meta = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            if (e.getKey() == null || e.getValue() == null) {
                throw new SafetensorsException(Violation.METADATA_NOT_STRING_MAP, target, String.valueOf(e.getKey()),
                        "null key or value");
            }
            HeaderParser.checkUnicode(e.getKey(), target, METADATA_KEY);
            HeaderParser.checkUnicode(e.getValue(), target, METADATA_KEY);
            meta.put(e.getKey(), e.getValue());
        }
        List<TensorInfo> infos = new ArrayList<>(ordered.size());
        Map<String, Boolean> seen = HashMap.newHashMap(ordered.size());
        long offset = 0;
        for (Entry e : ordered) {
            if (e.name() == null || METADATA_KEY.equals(e.name())) {
                throw new SafetensorsException(Violation.TENSOR_FIELDS, target, e.name(),
                        "\"" + METADATA_KEY + "\" and null are not tensor names");
            }
            HeaderParser.checkUnicode(e.name(), target, e.name());
            if (seen.put(e.name(), Boolean.TRUE) != null) {
                throw new SafetensorsException(Violation.DUPLICATE_KEY, target, e.name(), "tensor added twice");
            }
            long[] shape = e.shape();
            long count = HeaderParser.elementCount(e.name(), shape, target);
            long bytes = HeaderParser.storageBytes(e.name(), e.dtype(), shape, count, target);
            if (offset + bytes > MAX_DIMENSION) {
                throw new SafetensorsException(Violation.INVALID_OFFSETS, target, e.name(),
                        "the data section would exceed 2^48-1 bytes");
            }
            infos.add(new TensorInfo(e.name(), e.dtype(), shape, offset, offset + bytes, count));
            offset += bytes;
        }
        byte[] json = HeaderJson.write(meta, infos);
        long padded = (json.length + 7L) & ~7L;
        if (padded > MAX_HEADER_BYTES) {
            throw new SafetensorsException(Violation.HEADER_TOO_LARGE, target, null, "N = " + padded);
        }
        // Tensors are already in offset order: that is how they were laid out.
        return new Header(padded, infos, meta);
    }

    /**
     * The header as written to a file: 8-byte little-endian N, then N bytes of compact JSON padded
     * with spaces to a multiple of 8, so the data section starts 8-byte aligned.
     */
    public byte[] toBytes() {
        byte[] json = HeaderJson.write(metadata, tensors);
        byte[] out = new byte[Math.toIntExact(PREFIX_BYTES + headerLength)];
        ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN).putLong(headerLength);
        System.arraycopy(json, 0, out, PREFIX_BYTES, json.length);
        java.util.Arrays.fill(out, PREFIX_BYTES + json.length, out.length, (byte) ' ');
        return out;
    }

    /** Compares as Rust compares {@code String}s: by UTF-8 bytes (differs from UTF-16 order above U+FFFF). */
    static int compareUtf8(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; ) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(i);
            if (ca != cb) {
                return Integer.compare(ca, cb); // code point order == UTF-8 byte order
            }
            i += Character.charCount(ca);
        }
        return Integer.compare(a.length(), b.length());
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
