package io.github.semyonsinchenko.safetensors.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link Header#maxEntryBytes} against the bytes {@link HeaderJson} really writes. */
class MaxEntryBytesTest {
    private static final List<String> NAMES = List.of("", "w", "model.layers.0.weight", "quote\"and\\backslash",
            "tab\tnewline\ncontrol\u0001\u001f", "кириллица", "emoji \uD83D\uDE00", "del\u007f");

    /** The entry's bytes in a header of that one tensor: the JSON minus its braces, plus the comma. */
    private static long entryBytes(String name, Dtype dtype, long[] shape, long begin, long end) {
        TensorInfo t = new TensorInfo(name, dtype, shape, begin, end, 0);
        return HeaderJson.write(Map.of(), List.of(t)).length - 2 + 1;
    }

    @Test
    void isExactForTheLongestDtypeAndLargestNumbers() {
        Dtype longest = Arrays.stream(Dtype.values()).max((a, b) -> a.name().length() - b.name().length())
                .orElseThrow();
        for (String name : NAMES) {
            for (int rank = 0; rank <= 4; rank++) {
                long[] shape = new long[rank];
                Arrays.fill(shape, Header.MAX_DIMENSION);
                assertEquals(entryBytes(name, longest, shape, Header.MAX_DIMENSION, Header.MAX_DIMENSION),
                        Header.maxEntryBytes(name, rank), name + " rank " + rank);
            }
        }
    }

    @Test
    void boundsEveryEntry() {
        SplittableRandom random = new SplittableRandom(29);
        for (int i = 0; i < 2000; i++) {
            String name = NAMES.get(random.nextInt(NAMES.size())) + random.nextInt(1000);
            Dtype dtype = Dtype.values()[random.nextInt(Dtype.values().length)];
            long[] shape = random.longs(random.nextInt(6), 0, Header.MAX_DIMENSION + 1).toArray();
            long begin = random.nextLong(Header.MAX_DIMENSION + 1);
            long end = random.nextLong(begin, Header.MAX_DIMENSION + 1);
            long actual = entryBytes(name, dtype, shape, begin, end);
            assertTrue(actual <= Header.maxEntryBytes(name, shape.length), name + " " + Arrays.toString(shape));
        }
    }
}
