package io.github.semyonsinchenko.safetensors.format;

import java.util.Arrays;
import java.util.List;

/**
 * Every rule of the format, in one place; the parser, the framing readers and the writer's layout
 * all call these, so the writer cannot produce what the reader would reject. The rules, checked in
 * this order, are the reference implementation's plus a rejection of duplicate keys (the reference
 * keeps the last):
 * <ol>
 *   <li>an 8-byte little-endian prefix N, with N &lt;= {@value Header#MAX_HEADER_BYTES} and 8 + N
 *       within the file ({@link #checkPrefix});</li>
 *   <li>the N bytes are UTF-8 holding one JSON object, padded only with 0x20 on either side, with no
 *       key twice in one object ({@link HeaderParser}, {@link #checkUnicode});</li>
 *   <li>{@code __metadata__}, if present, maps strings to strings;</li>
 *   <li>every other entry has exactly {@code dtype} (a known {@link Dtype}), {@code shape}
 *       (integers in [0, 2^48-1]) and {@code data_offsets} ([begin, end], begin &lt;= end);</li>
 *   <li>element count times bits does not overflow, is a multiple of 8, and equals
 *       (end - begin) * 8 ({@link #elementCount}, {@link #storageBytes}, {@link #checkSize});</li>
 *   <li>sorted by offset, the tensors tile the data section from 0 with no gap or overlap
 *       ({@link #checkTiling}), and the data section ends exactly at the end of the file
 *       ({@link #checkFileSize}).</li>
 * </ol>
 */
final class HeaderRules {
    private HeaderRules() {}

    /** Rule 1: N (read as unsigned) against the limit and, when known, the file size. */
    static void checkPrefix(long n, long fileSize, String source) throws SafetensorsException {
        if (n < 0 || n > Header.MAX_HEADER_BYTES) {
            throw new SafetensorsException(Violation.HEADER_TOO_LARGE, source, null,
                    "N = " + Long.toUnsignedString(n));
        }
        if (fileSize >= 0 && Header.PREFIX_BYTES + n > fileSize) {
            throw new SafetensorsException(Violation.HEADER_PAST_EOF, source, null,
                    "8 + N = " + (Header.PREFIX_BYTES + n) + " but the file has " + fileSize + " bytes");
        }
    }

    /** Rule 2 for decoded strings: a JSON escape can spell an unpaired surrogate, which has no UTF-8 form. */
    static void checkUnicode(String s, String source, String tensor) throws SafetensorsException {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new SafetensorsException(Violation.HEADER_NOT_UTF8, source, tensor,
                        "the unpaired surrogate \\u" + Integer.toHexString(c) + " has no UTF-8 form");
            }
        }
    }

    /** Rule 5: product of the shape with overflow checks (the reference's checked_mul). */
    static long elementCount(String name, long[] shape, String source) throws SafetensorsException {
        long count = 1;
        for (long d : shape) {
            if (d < 0 || d > Header.MAX_DIMENSION) {
                throw new SafetensorsException(Violation.INVALID_SHAPE, source, name,
                        "dimension " + d + " of " + Arrays.toString(shape));
            }
            try {
                count = Math.multiplyExact(count, d);
            } catch (ArithmeticException e) {
                throw new SafetensorsException(Violation.SIZE_OVERFLOW, source, name,
                        "shape " + Arrays.toString(shape) + " has more than 2^63-1 elements");
            }
        }
        return count;
    }

    /** Rule 5: the bytes {@code count} elements of {@code dtype} take; whole bytes only. */
    static long storageBytes(String name, Dtype dtype, long[] shape, long count, String source)
            throws SafetensorsException {
        try {
            return dtype.storageBytes(count);
        } catch (ArithmeticException e) {
            throw new SafetensorsException(Violation.SIZE_OVERFLOW, source, name,
                    count + " elements x " + dtype.bits() + " bits overflows");
        } catch (IllegalArgumentException e) {
            throw new SafetensorsException(Violation.MISALIGNED_SIZE, source, name,
                    dtype + " " + Arrays.toString(shape) + " is " + count + " x " + dtype.bits() + " bits");
        }
    }

    /** Rules 4 and 5 for one parsed entry: begin &lt;= end and end - begin is what dtype and shape need. */
    static TensorInfo checkSize(String name, Dtype dtype, long[] shape, long begin, long end, String source)
            throws SafetensorsException {
        if (begin > end) {
            throw new SafetensorsException(Violation.INVALID_OFFSETS, source, name, "begin " + begin + " > end " + end);
        }
        long count = elementCount(name, shape, source);
        long bytes = storageBytes(name, dtype, shape, count, source);
        if (end - begin != bytes) {
            throw new SafetensorsException(Violation.SIZE_MISMATCH, source, name,
                    "data_offsets [" + begin + ", " + end + "] hold " + (end - begin) + " bytes, but " + dtype + " "
                            + Arrays.toString(shape) + " needs " + bytes);
        }
        return new TensorInfo(name, dtype, shape, begin, end, count);
    }

    /** Rule 6: offsets sorted ascending tile [0, last end) exactly; returns the data section size. */
    static long checkTiling(List<TensorInfo> sorted, String source) throws SafetensorsException {
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

    /** Rule 6: the file is exactly 8 + N + the data section. */
    static void checkFileSize(long n, long dataSize, long fileSize, String source) throws SafetensorsException {
        long expected = Header.PREFIX_BYTES + n + dataSize;
        if (fileSize < expected) {
            throw new SafetensorsException(Violation.DATA_TRUNCATED, source, null,
                    "header and data need " + expected + " bytes, the file has " + fileSize);
        }
        if (fileSize > expected) {
            throw new SafetensorsException(Violation.TRAILING_BYTES, source, null,
                    (fileSize - expected) + " bytes after the data section, which ends at " + expected);
        }
    }
}
