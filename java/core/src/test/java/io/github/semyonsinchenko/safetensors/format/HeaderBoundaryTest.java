package io.github.semyonsinchenko.safetensors.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The accepting side of each limit the malformed corpus tests from the rejecting side: the largest
 * values and the unusual-but-valid spellings the rules allow.
 */
class HeaderBoundaryTest {

    private static Header parse(String json, long fileSize) throws SafetensorsException {
        return Header.parse(json.getBytes(StandardCharsets.UTF_8), fileSize, "boundary");
    }

    /** A stream of the 8-byte prefix, then "{}" and spaces up to N bytes, without holding them all. */
    private static InputStream spaces(long n) {
        byte[] prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(n).array();
        return new InputStream() {
            private long pos;

            @Override
            public int read() {
                if (pos >= 8 + n) {
                    return -1;
                }
                long p = pos++;
                return p < 8 ? prefix[(int) p] & 0xFF : p == 8 ? '{' : p == 9 ? '}' : ' ';
            }

            @Override
            public int read(byte[] b, int off, int len) {
                int i = 0;
                while (i < len && pos < 8 + n) {
                    if (pos < 10) {
                        b[off + i++] = (byte) read();
                    } else {
                        int run = (int) Math.min(len - i, 8 + n - pos);
                        java.util.Arrays.fill(b, off + i, off + i + run, (byte) ' ');
                        i += run;
                        pos += run;
                    }
                }
                return i == 0 && len > 0 ? -1 : i;
            }
        };
    }

    @Test
    void headerOfExactlyTheLimitIsAccepted() throws IOException {
        long n = Header.MAX_HEADER_BYTES;
        Header h = Header.read(spaces(n), 8 + n, "limit");
        assertEquals(n, h.headerLength());
        assertEquals(0, h.size());
    }

    @Test
    void largestDimensionAndOffsetAreAccepted() throws SafetensorsException {
        long max = Header.MAX_DIMENSION;
        Header h = parse("{\"w\":{\"dtype\":\"U8\",\"shape\":[" + max + "],\"data_offsets\":[0," + max + "]}}", -1);
        assertEquals(max, h.tensor("w").byteSize());
        assertEquals(max, h.dataSize());
    }

    /**
     * The element count is multiplied out left to right with overflow checks, as the reference does:
     * a leading zero keeps every partial product at 0, while a zero after two huge dimensions comes
     * too late (malformed/shape_product_overflow_before_zero).
     */
    @Test
    void zeroDimensionBeforeHugeOnesIsAccepted() throws SafetensorsException {
        long max = Header.MAX_DIMENSION;
        Header empty = parse("{\"w\":{\"dtype\":\"F64\",\"shape\":[0," + max + "," + max + "],\"data_offsets\":[0,0]}}", -1);
        assertEquals(0, empty.tensor("w").elementCount());
    }

    @Test
    void spacesMayPadBothEndsAndJsonWhitespaceMaySitInside() throws SafetensorsException {
        String t = "{ \"w\" :\n{\"dtype\":\t\"U8\", \"shape\" : [ 1 ],\r\n\"data_offsets\":[0,1]} }";
        Header h = parse("   " + t + "     ", 8 + 3 + t.length() + 5 + 1);
        assertEquals(List.of("w"), h.tensors().stream().map(TensorInfo::name).toList());
    }

    @Test
    void escapesAreDecodedInNamesAndMetadata() throws SafetensorsException {
        Header h = parse("{\"__metadata__\":{\"\\u006b\":\"\\ud83d\\ude00\\n\"},"
                + "\"\\u0077\\/\\ud83d\\ude00\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1]}}", -1);
        assertEquals("\uD83D\uDE00\n", h.metadata().get("k"));
        assertTrue(h.contains("w/\uD83D\uDE00"), h.tensors().toString());
    }

    @Test
    void emptyNamesKeysAndValuesAreAllowed() throws SafetensorsException {
        Header h = parse("{\"__metadata__\":{\"\":\"\"},\"\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[0,1]}}", -1);
        assertEquals("", h.metadata().get(""));
        assertTrue(h.contains(""));
    }

    @Test
    void zeroByteTensorsMaySitAtAnyBoundaryInAnyKeyOrder() throws SafetensorsException {
        Header h = parse("{\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]},"
                + "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]},"
                + "\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                + "\"e\":{\"dtype\":\"I64\",\"shape\":[2,0],\"data_offsets\":[8,8]},"
                + "\"s\":{\"dtype\":\"F16\",\"shape\":[0],\"data_offsets\":[0,0]}}", -1);
        assertEquals(List.of("s", "a", "z", "b", "e"), h.tensors().stream().map(TensorInfo::name).toList());
        assertEquals(8, h.dataSize());
    }

    @Test
    void subByteTensorsThatFillWholeBytesAreAccepted() throws SafetensorsException {
        Header h = parse("{\"a\":{\"dtype\":\"F4\",\"shape\":[2,3],\"data_offsets\":[0,3]},"
                + "\"b\":{\"dtype\":\"F6_E2M3\",\"shape\":[4],\"data_offsets\":[3,6]}}", -1);
        assertEquals(3, h.tensor("a").byteSize());
        assertEquals(3, h.tensor("b").byteSize());
    }
}
