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

    @Test
    void headerBytesAreStable() throws SafetensorsException {
        // Guard for the fixes above: plain ASCII output is unchanged.
        Header written = layout(Map.of(), "a");
        assertArrayEquals("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}   ".getBytes(StandardCharsets.US_ASCII),
                headerJson(written));
    }
}
