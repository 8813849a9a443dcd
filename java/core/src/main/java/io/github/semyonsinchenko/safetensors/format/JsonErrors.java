package io.github.semyonsinchenko.safetensors.format;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.io.JsonEOFException;
import java.io.IOException;
import java.util.Locale;

/**
 * Puts a JSON syntax error into our words: where (line, column and header byte) and what, in terms
 * of the JSON grammar. Jackson's own messages suggest parser features to enable and print redaction
 * markers, which mean nothing to someone holding a broken file; they are only matched here, never
 * shown. Public for the project's other JSON inputs (CLI specs, Spark options).
 */
public final class JsonErrors {
    private JsonErrors() {}

    /**
     * Describes a JSON syntax error of any document.
     *
     * @param e the parser's exception
     * @return "invalid JSON at line L, column C: what went wrong"
     */
    public static String describe(JsonProcessingException e) {
        return describe(e, null);
    }

    /**
     * The same for a document parsed from {@code text} (a parser over the characters, so that
     * locations are character offsets): the message can then say which character was unexpected.
     *
     * @param e the parser's exception
     * @param text the characters parsed, or null when unknown
     * @return "invalid JSON at line L, column C: what went wrong"
     */
    public static String describe(JsonProcessingException e, char[] text) {
        JsonLocation at = e.getLocation();
        String what = what(e, at, text, 0, "the JSON");
        return at == null ? "invalid JSON: " + what
                : String.format(Locale.ROOT, "invalid JSON at line %d, column %d: %s", at.getLineNr(),
                        at.getColumnNr(), what);
    }

    /**
     * @param parserAt where the parser was, for errors that carry no location of their own
     * @param text the whole decoded header
     * @param from where the parsed slice starts in {@code text} (after leading 0x20 padding)
     */
    static String describe(IOException e, JsonLocation parserAt, char[] text, int from) {
        JsonLocation at = e instanceof JsonProcessingException j && j.getLocation() != null ? j.getLocation() : parserAt;
        String what = what(e, at, text, from, "the header");
        if (at == null) {
            return "invalid JSON: " + what;
        }
        long index = from + Math.max(0, at.getCharOffset());
        return String.format(Locale.ROOT, "invalid JSON at line %d, column %d (header byte %d): %s",
                at.getLineNr(), at.getColumnNr() + (at.getLineNr() == 1 ? from : 0), utf8Bytes(text, index), what);
    }

    /** What went wrong; {@code document} ("the header", "the JSON") names what was being parsed. */
    private static String what(IOException e, JsonLocation at, char[] text, int from, String document) {
        String internal = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
        String m = internal == null ? "" : internal;
        if (e instanceof JsonEOFException) {
            return document + " ends inside an unclosed object, array or string";
        }
        if (e instanceof StreamConstraintsException) {
            return m.contains("esting") ? "objects and arrays are nested too deeply"
                    : m.contains("umber") ? "a number has too many digits" : "a value exceeds the parser's limits";
        }
        if (m.startsWith("Duplicate field '") && m.indexOf('\'', 17) > 0) {
            return "the key " + m.substring(16, m.indexOf('\'', 17) + 1) + " appears twice in one object";
        }
        if (m.startsWith("Non-standard token")) {
            return "NaN and Infinity are not JSON numbers";
        }
        if (m.contains("Leading zeroes")) {
            return "a number starts with a leading zero";
        }
        if (m.contains("character escape")) {
            return "a string holds an invalid backslash escape";
        }
        if (m.startsWith("Illegal unquoted character")) {
            return "a control character (below U+0020) appears unescaped in a string";
        }
        if (m.contains("comment")) {
            return "comments are not JSON";
        }
        if (m.startsWith("Unrecognized token")) {
            return "an unquoted word that is not true, false or null";
        }
        if (m.contains("numeric value") || m.contains("Exponent") || m.contains("Decimal point")) {
            return "a malformed number";
        }
        String found = charAt(at, text, from, document);
        if (m.contains("double-quote to start field name")) {
            return "expected a key in double quotes, found " + found + (found.equals("'}'") ? " (a trailing comma?)"
                    : found.equals("'''") ? " (single quotes are not JSON)" : "");
        }
        if (m.contains("expecting comma")) {
            return "expected ',' or a closing bracket, found " + found;
        }
        if (m.contains("expecting a colon")) {
            return "expected ':' after a key, found " + found;
        }
        if (m.startsWith("Unexpected character")) {
            return "unexpected " + found;
        }
        return "malformed JSON near " + found;
    }

    private static String charAt(JsonLocation at, char[] text, int from, String document) {
        if (text == null) {
            return "another character";
        }
        if (at != null) {
            long i = from + at.getCharOffset();
            if (i >= 0 && i < text.length) {
                char c = text[(int) i];
                return c >= 0x20 && c < 0x7f ? "'" + c + "'" : String.format(Locale.ROOT, "U+%04X", (int) c);
            }
        }
        return "the end of " + document;
    }

    /** The UTF-8 length of {@code text[0, end)}: the header byte offset of char {@code end}. */
    static long utf8Bytes(char[] text, long end) {
        long bytes = 0;
        int n = (int) Math.min(end, text.length);
        for (int i = 0; i < n; i++) {
            char c = text[i];
            bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : Character.isSurrogate(c) ? 2 : 3;
        }
        return bytes;
    }
}
