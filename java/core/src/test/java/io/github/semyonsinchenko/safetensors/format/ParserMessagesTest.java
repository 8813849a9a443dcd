package io.github.semyonsinchenko.safetensors.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Messages are ours: a broken header is described in our words with its line, column and header
 * byte offset, and never with the JSON library's class, feature or constraint names.
 */
class ParserMessagesTest {
    /** What Jackson's own messages carry: feature toggles, class names, its redaction marker, backticks. */
    static final Pattern LIBRARY_INTERNALS = Pattern.compile(
            "(?i)jackson|fasterxml|JsonReadFeature|StreamReadFeature|JsonParser|JsonToken|StreamReadConstraints"
                    + "|REDACTED|`|\\(code \\d+\\)|Feature\\.|Source: |\\[Source");

    static List<MalformedCorpusTest.Expected> corpus() {
        return MalformedCorpusTest.expectations();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("corpus")
    void noCorpusMessageLeaksParserInternals(MalformedCorpusTest.Expected e) {
        Path file = MalformedCorpusTest.corpusDir().resolve(e.file());
        SafetensorsException ex = assertThrows(SafetensorsException.class, () -> {
            try (SafetensorsFile f = SafetensorsFile.open(file)) {
                f.size();
            }
        });
        assertFalse(LIBRARY_INTERNALS.matcher(ex.getMessage()).find(), ex.getMessage());
    }

    /** Broken JSON beyond the corpus: each gets its own wording and the place it starts. */
    static List<String[]> brokenJson() {
        return List.of(
                new String[] {"{\"w\":{\"dtype\":\"F32\",\"shape\":[NaN],\"data_offsets\":[0,0]}}",
                        "NaN and Infinity are not JSON numbers"},
                new String[] {"{\"w\":{\"shape\":[-Infinity]}}", "NaN and Infinity are not JSON numbers"},
                new String[] {"{\"__metadata__\":{\"k\":\"v\"}", "the header ends inside an unclosed object, array or string"},
                new String[] {"{\"__metadata__\":{\"k\":\"v}", "the header ends inside"},
                new String[] {"{\"__metadata__\":{\"k\":\"v\",}}", "expected a key in double quotes, found '}' (a trailing comma?)"},
                new String[] {"{'a':1}", "found ''' (single quotes are not JSON)"},
                new String[] {"{\"a\" 1}", "expected ':' after a key, found '1'"},
                new String[] {"{\"w\":{\"shape\":[1 2]}}", "expected ',' or a closing bracket, found '2'"},
                new String[] {"{\"w\":{\"shape\":[01]}}", "a number starts with a leading zero"},
                new String[] {"{\"w\":{\"shape\":[1.5e]}}", "a malformed number"},
                new String[] {"{\"__metadata__\":{\"k\":\"\\q\"}}", "a string holds an invalid backslash escape"},
                new String[] {"{\"a\u0001\":1}", "a control character (below U+0020) appears unescaped"},
                new String[] {"{/*c*/}", "comments are not JSON"},
                new String[] {"{\"a\":tru}", "an unquoted word that is not true, false or null"},
                new String[] {"{\"w\":{\"shape\":[" + "9".repeat(2000) + "]}}", "a number has too many digits"});
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("brokenJson")
    void brokenJsonIsDescribedInOurWords(String json, String expected) {
        byte[] bytes = ("  " + json).getBytes(StandardCharsets.UTF_8);
        SafetensorsException ex = assertThrows(SafetensorsException.class, () -> Header.parse(bytes, -1, "h.json"));
        String m = ex.getMessage();
        assertEquals(Violation.HEADER_NOT_JSON_OBJECT, ex.violation(), m);
        assertTrue(m.contains(expected), m);
        assertTrue(Pattern.compile("invalid JSON at line 1, column \\d+ \\(header byte \\d+\\): ").matcher(m).find(), m);
        assertFalse(LIBRARY_INTERNALS.matcher(m).find(), m);
    }

    @Test
    void theLocationCountsPaddingLinesAndUtf8Bytes() {
        // "é" is two UTF-8 bytes; the error (the 'x') is on line 2, after four leading spaces.
        byte[] bytes = "    {\"é\":\n x}".getBytes(StandardCharsets.UTF_8);
        SafetensorsException ex = assertThrows(SafetensorsException.class, () -> Header.parse(bytes, -1, "h.json"));
        assertTrue(ex.getMessage().contains("invalid JSON at line 2, column 2 (header byte 12): "), ex.getMessage());
    }
}
