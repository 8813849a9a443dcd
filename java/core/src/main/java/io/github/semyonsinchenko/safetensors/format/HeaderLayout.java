package io.github.semyonsinchenko.safetensors.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;

/**
 * The writer's side: lays tensors out as the reference writer does and serializes the header once,
 * with the same rules ({@link HeaderRules}) the reader checks.
 */
final class HeaderLayout {
    private HeaderLayout() {}

    /**
     * By descending dtype alignment ({@link Dtype} declaration order), then by name (UTF-8 byte
     * order, as Rust compares strings), unless {@code keepInsertionOrder}.
     */
    static Header layout(Map<String, String> metadata, List<Header.Entry> entries, boolean keepInsertionOrder,
                         String target) throws SafetensorsException {
        List<Header.Entry> ordered = new ArrayList<>(entries);
        if (!keepInsertionOrder) {
            ordered.sort(Comparator.comparing(Header.Entry::dtype, Comparator.reverseOrder())
                    .thenComparing(Header.Entry::name, HeaderLayout::compareUtf8));
        }
        SequencedMap<String, String> meta = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            if (e.getKey() == null || e.getValue() == null) {
                throw new SafetensorsException(Violation.METADATA_NOT_STRING_MAP, target, String.valueOf(e.getKey()),
                        "null key or value");
            }
            HeaderRules.checkUnicode(e.getKey(), target, Header.METADATA_KEY);
            HeaderRules.checkUnicode(e.getValue(), target, Header.METADATA_KEY);
            meta.put(e.getKey(), e.getValue());
        }
        List<TensorInfo> infos = new ArrayList<>(ordered.size());
        Map<String, TensorInfo> byName = HashMap.newHashMap(ordered.size());
        long offset = 0;
        for (Header.Entry e : ordered) {
            if (e.name() == null || Header.METADATA_KEY.equals(e.name())) {
                throw new SafetensorsException(Violation.TENSOR_FIELDS, target, e.name(),
                        "\"" + Header.METADATA_KEY + "\" and null are not tensor names");
            }
            HeaderRules.checkUnicode(e.name(), target, e.name());
            if (byName.containsKey(e.name())) {
                throw new SafetensorsException(Violation.DUPLICATE_KEY, target, e.name(), "tensor added twice");
            }
            long[] shape = e.shape();
            long count = HeaderRules.elementCount(e.name(), shape, target);
            long bytes = HeaderRules.storageBytes(e.name(), e.dtype(), shape, count, target);
            if (offset + bytes > Header.MAX_DIMENSION) {
                throw new SafetensorsException(Violation.INVALID_OFFSETS, target, e.name(),
                        "the data section would exceed 2^48-1 bytes");
            }
            TensorInfo info = new TensorInfo(e.name(), e.dtype(), shape, offset, offset + bytes, count);
            byName.put(e.name(), info);
            infos.add(info);
            offset += bytes;
        }
        byte[] json = HeaderJson.write(meta, infos);
        long padded = (json.length + 7L) & ~7L;
        if (padded > Header.MAX_HEADER_BYTES) {
            throw new SafetensorsException(Violation.HEADER_TOO_LARGE, target, null, "N = " + padded);
        }
        // Tensors are already in offset order: that is how they were laid out.
        return new Header(padded, infos, byName, meta, frame(json, padded));
    }

    /** An entry's JSON with empty name, dtype and numbers, and the comma that follows it. */
    private static final int ENTRY_PUNCTUATION = "\"\":{\"dtype\":\"\",\"shape\":[],\"data_offsets\":[,]},".length();
    /** Digits of the largest shape entry or offset. */
    private static final int MAX_NUMBER_DIGITS = Long.toString(Header.MAX_DIMENSION).length();
    private static final int MAX_DTYPE_CHARS = Arrays.stream(Dtype.values()).mapToInt(d -> d.name().length()).max()
            .orElseThrow();

    /**
     * The most bytes the JSON entry of a tensor called {@code name} of rank {@code rank} can take in
     * a written header, with the comma after it: the name escaped as {@link HeaderJson} escapes it,
     * the longest dtype, and every dimension and offset at its largest.
     */
    static long maxEntryBytes(String name, int rank) {
        long nameBytes = 0;
        for (int i = 0; i < name.length(); ) {
            int c = name.codePointAt(i);
            i += Character.charCount(c);
            nameBytes += c == '"' || c == '\\' ? 2
                    : c < 0x20 ? ("\b\f\n\r\t".indexOf(c) >= 0 ? 2 : 6)
                    : c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        }
        return nameBytes + ENTRY_PUNCTUATION + MAX_DTYPE_CHARS + (long) rank * MAX_NUMBER_DIGITS
                + Math.max(rank - 1, 0) + 2L * MAX_NUMBER_DIGITS;
    }

    /** 8-byte little-endian N, the JSON, then spaces up to N, so the data section starts 8-byte aligned. */
    static byte[] frame(byte[] json, long headerLength) {
        byte[] out = new byte[Math.toIntExact(Header.PREFIX_BYTES + headerLength)];
        ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN).putLong(headerLength);
        System.arraycopy(json, 0, out, Header.PREFIX_BYTES, json.length);
        Arrays.fill(out, Header.PREFIX_BYTES + json.length, out.length, (byte) ' ');
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
}
