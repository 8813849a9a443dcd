package io.github.semyonsinchenko.safetensors.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Regressions for bugs found while hardening the header code; each test names what used to go wrong. */
class HeaderRegressionTest {

    private static byte[] headerJson(Header h) {
        byte[] all = h.toBytes();
        return Arrays.copyOfRange(all, Header.PREFIX_BYTES, all.length);
    }

    private static Header layout(Map<String, String> metadata, String... names) throws SafetensorsException {
        List<Header.Entry> entries = Arrays.stream(names).map(n -> new Header.Entry(n, Dtype.U8, new long[] {1})).toList();
        return Header.layout(metadata, entries, false, "test");
    }

    private static Header reparse(Header written) throws SafetensorsException {
        return Header.parse(headerJson(written), written.fileSize(), "reparsed");
    }

    /** Jackson's default 50,000-character name limit made the reader reject names the writer wrote. */
    @Test
    void namesLongerThanJacksonsDefaultLimitRoundTrip() throws SafetensorsException {
        String longName = "t".repeat(60_000);
        String longKey = "k".repeat(60_000);
        Header written = layout(Map.of(longKey, "v"), longName);
        Header read = reparse(written);
        assertEquals(written.tensors(), read.tensors());
        assertEquals("v", read.metadata().get(longKey));
    }

    /** Jackson escaped supplementary characters as two \\uXXXX escapes; serde_json writes UTF-8. */
    @Test
    void supplementaryCharactersAreWrittenAsFourByteUtf8() throws SafetensorsException {
        String emoji = "\uD83D\uDE00";
        Header written = layout(Map.of("note", emoji), "w" + emoji);
        String json = new String(headerJson(written), StandardCharsets.UTF_8);
        assertTrue(json.contains("\"w" + emoji + "\""), json);
        assertTrue(json.contains("\"note\":\"" + emoji + "\""), json);
        assertEquals(written.tensors(), reparse(written).tensors());
    }

    /** Control characters are escaped as serde_json does: short escapes where JSON has them, else lowercase hex. */
    @Test
    void controlCharactersAreEscapedLikeTheReferenceWriter() throws SafetensorsException {
        Map<String, String> metadata = new LinkedHashMap<>();
        metadata.put("k", "\b\t\n\f\r\u0001\u001f\u007f\"\\/");
        Header written = layout(metadata);
        String json = new String(headerJson(written), StandardCharsets.UTF_8).stripTrailing();
        assertEquals("{\"__metadata__\":{\"k\":\"\\b\\t\\n\\f\\r\\u0001\\u001f\u007f\\\"\\\\/\"}}", json);
        assertEquals(metadata, reparse(written).metadata());
    }

    /** A lone surrogate was written as a \\uD800 escape, which the reader then rejected. */
    @Test
    void writerRejectsUnpairedSurrogates() {
        for (String bad : List.of("\uD800", "a\uDC00", "\uDE00\uD83D", "x\uD83D")) {
            SafetensorsException name = assertThrows(SafetensorsException.class, () -> layout(Map.of(), bad));
            assertEquals(Violation.HEADER_NOT_UTF8, name.violation());
            SafetensorsException key = assertThrows(SafetensorsException.class, () -> layout(Map.of(bad, "v")));
            assertEquals(Violation.HEADER_NOT_UTF8, key.violation());
            SafetensorsException value = assertThrows(SafetensorsException.class, () -> layout(Map.of("k", bad)));
            assertEquals(Violation.HEADER_NOT_UTF8, value.violation());
        }
    }

    /** serde_json reads -0 as a float, so the reference rejects it where an integer is required. */
    @Test
    void negativeZeroIsNotANonNegativeInteger() {
        byte[] shape = "{\"w\":{\"dtype\":\"U8\",\"shape\":[-0],\"data_offsets\":[0,0]}}".getBytes(StandardCharsets.UTF_8);
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> Header.parse(shape, -1, "s"));
        assertEquals(Violation.INVALID_SHAPE, e.violation());
        assertEquals("w", e.tensor());
        byte[] offsets = "{\"w\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[-0,0]}}".getBytes(StandardCharsets.UTF_8);
        e = assertThrows(SafetensorsException.class, () -> Header.parse(offsets, -1, "s"));
        assertEquals(Violation.INVALID_OFFSETS, e.violation());
    }

    @Test
    void headerBytesAreStable() throws SafetensorsException {
        // Guard for the fixes above: plain ASCII output is unchanged.
        Header written = layout(Map.of(), "a");
        assertArrayEquals("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}   ".getBytes(StandardCharsets.US_ASCII),
                headerJson(written));
    }

    /** The writer's header bytes come from the layout's one serialization; callers get copies. */
    @Test
    void laidOutBytesAreSerializedOnceAndHandedOutAsCopies() throws SafetensorsException {
        Header h = layout(Map.of("k", "v"), "a", "b");
        byte[] first = h.toBytes();
        first[Header.PREFIX_BYTES] = 'X';
        byte[] second = h.toBytes();
        assertEquals('{', second[Header.PREFIX_BYTES]);
        assertEquals(Header.PREFIX_BYTES + h.headerLength(), second.length);
        assertEquals(h.tensors(), reparse(h).tensors());
        assertArrayEquals(second, reparse(h).toBytes(), "a parsed copy serializes to the same bytes");
    }

    /** The parser skips the sort when entries come in offset order; any other order must still be sorted. */
    @Test
    void entriesOutOfOffsetOrderAreSortedWithEmptyTensorsByName() throws SafetensorsException {
        String json = "{\"c\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2,4]},"
                + "\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[2,2]},"
                + "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
                + "\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[2,2]}}";
        Header h = Header.parse(json.getBytes(StandardCharsets.UTF_8), -1, "unordered");
        assertEquals(List.of("b", "a", "z", "c"), h.tensors().stream().map(TensorInfo::name).toList());
        assertEquals(4, h.dataSize());
        assertEquals("c", h.tensor("c").name());
    }
}
