package io.github.semyonsinchenko.safetensors.preprocess.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The vocabularies' UTF-8 rules: the cut on a character boundary and byte order. */
class Utf8Test {

    @Test
    void truncationCutsOnACharacterBoundary() {
        String ascii = "a".repeat(2047);
        assertEquals(ascii + "b", Utf8.truncate(ascii + "bc", 2048));
        String twoByte = "a".repeat(2047) + "é"; // é is 2 bytes and would straddle byte 2048
        assertEquals("a".repeat(2047), Utf8.truncate(twoByte + "x", 2048));
        String emoji = "a".repeat(2045) + "😀"; // 4 bytes at 2045..2048: exactly over by one
        assertEquals("a".repeat(2045), Utf8.truncate(emoji, 2048));
        assertEquals("a".repeat(2044) + "😀", Utf8.truncate("a".repeat(2044) + "😀z", 2048));
        assertEquals("short", Utf8.truncate("short", 2048));
        assertTrue(Utf8.truncate("é".repeat(5000), 2048).getBytes(StandardCharsets.UTF_8).length == 2048);
    }

    @Test
    void byteOrderDiffersFromUtf16Order() {
        List<String> values = new ArrayList<>(List.of("😀", "\uFFFF", "Z", "é", "a"));
        values.sort(Utf8.BYTE_ORDER);
        assertEquals(List.of("Z", "a", "é", "\uFFFF", "😀"), values);
        assertTrue("\uFFFF".compareTo("😀") > 0, "Java's own order puts the surrogate pair first");
    }
}
