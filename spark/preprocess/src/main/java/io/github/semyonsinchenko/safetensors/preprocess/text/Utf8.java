package io.github.semyonsinchenko.safetensors.preprocess.text;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import org.apache.spark.unsafe.Platform;

/** UTF-8 rules of the vocabularies: byte-order comparison and the cut on a character boundary. */
public final class Utf8 {
    private Utf8() {}

    /** Vocabulary strings longer than this many UTF-8 bytes are cut (headwater's ~512-token budget). */
    public static final int MAX_VOCAB_BYTES = 2048;

    /** Orders strings by their UTF-8 bytes (Rust's {@code String} order), not Java's UTF-16 order. */
    public static final Comparator<String> BYTE_ORDER =
            (a, b) -> Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));

    /** {@code s} cut to at most {@code limit} UTF-8 bytes, at the last character boundary that fits. */
    public static String truncate(String s, int limit) {
        if (s.length() * 3L <= limit) {
            return s; // cannot exceed the limit: at most 3 bytes per UTF-16 unit
        }
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= limit) {
            return s;
        }
        return new String(bytes, 0, cutLength(bytes, Platform.BYTE_ARRAY_OFFSET, bytes.length, limit),
                StandardCharsets.UTF_8);
    }

    /**
     * The length of the UTF-8 bytes at {@code base} and {@code offset} (Spark's unsafe addressing),
     * {@code n} of them, cut as {@link #truncate} cuts: at most {@code limit}, ending on a character
     * boundary.
     */
    static int cutLength(Object base, long offset, int n, int limit) {
        if (n <= limit) {
            return n;
        }
        int end = limit;
        while (end > 0 && (Platform.getByte(base, offset + end) & 0xC0) == 0x80) {
            end--; // a continuation byte: the character started earlier
        }
        return end;
    }
}
