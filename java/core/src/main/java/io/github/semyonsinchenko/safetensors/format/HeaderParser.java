package io.github.semyonsinchenko.safetensors.format;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SequencedMap;

/**
 * Streaming JSON walk over a header with jackson-core: no tree, no data binding, so hostile input
 * (deep nesting, huge arrays, long strings) costs at most one pass over N bytes.
 */
final class HeaderParser {
    private static final JsonFactory JSON = JsonFactory.builder()
            // The header limit is ours (100 MB), not Jackson's defaults of 20 M chars per string and
            // 50,000 per name: the writer accepts any tensor name or metadata key, so must the reader.
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxStringLength(Integer.MAX_VALUE)
                    .maxNameLength(Integer.MAX_VALUE)
                    .maxNestingDepth(64)
                    .build())
            // Names are mostly unique tensor names, seen once: interning them in Jackson's symbol
            // table only costs (half the tokenizing time for 10,000 tensors).
            .disable(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES)
            .build();

    private HeaderParser() {}

    /** Offset order; the name only separates empty tensors at the same offset. */
    private static final Comparator<TensorInfo> OFFSET_ORDER = (x, y) -> x.begin() != y.begin()
            ? Long.compare(x.begin(), y.begin())
            : x.end() != y.end() ? Long.compare(x.end(), y.end()) : x.name().compareTo(y.name());

    /** N header bytes (after the prefix) to a validated header; see {@link HeaderRules} for the order. */
    static Header parse(byte[] headerBytes, long fileSize, String source) throws SafetensorsException {
        HeaderRules.checkPrefix(headerBytes.length, fileSize, source);
        // Sized for the ~100 header bytes a tensor entry takes (10,000 tensors never rehash), capped
        // so that a huge, mostly padded header does not reserve a huge table.
        Map<String, TensorInfo> byName = HashMap.newHashMap(Math.min(headerBytes.length / 64, 1 << 17));
        SequencedMap<String, String> metadata = new LinkedHashMap<>();
        List<TensorInfo> tensors = parseJson(headerBytes, source, byName, metadata);
        if (!isSorted(tensors)) { // writers (ours, the reference) list tensors in offset order
            tensors.sort(OFFSET_ORDER);
        }
        long dataSize = HeaderRules.checkTiling(tensors, source);
        if (fileSize >= 0) {
            HeaderRules.checkFileSize(headerBytes.length, dataSize, fileSize, source);
        }
        return new Header(headerBytes.length, tensors, byName, metadata, null);
    }

    private static boolean isSorted(List<TensorInfo> tensors) {
        for (int i = 1; i < tensors.size(); i++) {
            if (OFFSET_ORDER.compare(tensors.get(i - 1), tensors.get(i)) > 0) {
                return false;
            }
        }
        return true;
    }

    /** The tensors in file order; fills {@code byName} (rejecting duplicates) and {@code metadata}. */
    private static List<TensorInfo> parseJson(byte[] bytes, String source, Map<String, TensorInfo> byName,
                                              SequencedMap<String, String> metadata) throws SafetensorsException {
        char[] text = decodeUtf8(bytes, source);
        int from = 0;
        int to = text.length;
        // Only 0x20 pads a header; the reference writer pads the end, some writers the start.
        while (from < to && text[from] == ' ') {
            from++;
        }
        while (to > from && text[to - 1] == ' ') {
            to--;
        }
        if (from == to || text[from] != '{' || text[to - 1] != '}') {
            throw new SafetensorsException(Violation.HEADER_NOT_JSON_OBJECT, source, null,
                    from == to ? "the header is empty or all spaces"
                            : "it must start with '{' and end with '}' after removing 0x20 padding, found "
                                    + describe(text[from]) + " ... " + describe(text[to - 1]));
        }
        try (JsonParser p = JSON.createParser(text, from, to - from)) {
            try {
                return walk(p, source, byName, metadata);
            } catch (SafetensorsException e) {
                throw e;
            } catch (IOException e) {
                // Jackson's syntax and limit errors: its messages name its own features and classes,
                // so they are reworded, never passed on.
                throw new SafetensorsException(Violation.HEADER_NOT_JSON_OBJECT, source, null,
                        JsonErrors.describe(e, p.currentLocation(), text, from), e);
            }
        } catch (SafetensorsException e) {
            throw e;
        } catch (IOException e) {
            // Creating or closing a parser over an in-memory array.
            throw new SafetensorsException(Violation.HEADER_NOT_JSON_OBJECT, source, null,
                    JsonErrors.describe(e, null, text, from), e);
        }
    }

    private static List<TensorInfo> walk(JsonParser p, String source, Map<String, TensorInfo> byName,
                                         SequencedMap<String, String> metadata) throws IOException {
        expect(p.nextToken() == JsonToken.START_OBJECT, Violation.HEADER_NOT_JSON_OBJECT, source, null,
                "the header does not start with an object");
        List<TensorInfo> tensors = new ArrayList<>();
        boolean seenMetadata = false;
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            checkUnicode(key, source);
            if (Header.METADATA_KEY.equals(key)) {
                expect(!seenMetadata, Violation.DUPLICATE_KEY, source, key,
                        "the key appears more than once in the header");
                seenMetadata = true;
                parseMetadata(p, source, metadata);
            } else {
                // Checked before the entry is parsed, so a repeated key is reported as such.
                expect(!byName.containsKey(key), Violation.DUPLICATE_KEY, source, key,
                        "the key appears more than once in the header");
                TensorInfo info = parseTensor(p, key, source);
                byName.put(key, info);
                tensors.add(info);
            }
        }
        if (t != JsonToken.END_OBJECT) {
            throw new SafetensorsException(Violation.HEADER_NOT_JSON_OBJECT, source, null,
                    "unexpected " + describe(t));
        }
        expect(p.nextToken() == null, Violation.HEADER_NOT_JSON_OBJECT, source, null,
                "content follows the closing brace");
        return tensors;
    }

    private static void parseMetadata(JsonParser p, String source, SequencedMap<String, String> metadata)
            throws IOException {
        JsonToken t = p.nextToken();
        if (t != JsonToken.START_OBJECT) {
            throw new SafetensorsException(Violation.METADATA_NOT_STRING_MAP, source, Header.METADATA_KEY,
                    "found " + describe(t));
        }
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            checkUnicode(key, source);
            if (metadata.containsKey(key)) {
                throw new SafetensorsException(Violation.DUPLICATE_KEY, source, Header.METADATA_KEY,
                        "metadata key \"" + key + "\" appears more than once");
            }
            JsonToken v = p.nextToken();
            if (v != JsonToken.VALUE_STRING) {
                throw new SafetensorsException(Violation.METADATA_NOT_STRING_MAP, source, Header.METADATA_KEY,
                        "the value of \"" + key + "\" is " + describe(v));
            }
            String value = p.getText();
            checkUnicode(value, source);
            metadata.put(key, value);
        }
    }

    private static TensorInfo parseTensor(JsonParser p, String name, String source) throws IOException {
        JsonToken t = p.nextToken();
        if (t != JsonToken.START_OBJECT) {
            throw new SafetensorsException(Violation.TENSOR_FIELDS, source, name,
                    "found " + describe(t));
        }
        Dtype dtype = null;
        long[] shape = null;
        long[] offsets = null;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            switch (field) {
                case "dtype" -> {
                    expect(dtype == null, Violation.DUPLICATE_KEY, source, name, "field \"dtype\" appears twice");
                    dtype = parseDtype(p, name, source);
                }
                case "shape" -> {
                    expect(shape == null, Violation.DUPLICATE_KEY, source, name, "field \"shape\" appears twice");
                    shape = parseIntegers(p, name, source, Violation.INVALID_SHAPE, -1);
                }
                case "data_offsets" -> {
                    expect(offsets == null, Violation.DUPLICATE_KEY, source, name,
                            "field \"data_offsets\" appears twice");
                    offsets = parseIntegers(p, name, source, Violation.INVALID_OFFSETS, 2);
                }
                default -> throw new SafetensorsException(Violation.TENSOR_FIELDS, source, name,
                        "unknown field \"" + field + "\"");
            }
        }
        expect(dtype != null, Violation.TENSOR_FIELDS, source, name, "missing field \"dtype\"");
        expect(shape != null, Violation.TENSOR_FIELDS, source, name, "missing field \"shape\"");
        expect(offsets != null, Violation.TENSOR_FIELDS, source, name, "missing field \"data_offsets\"");
        return HeaderRules.checkSize(name, dtype, shape, offsets[0], offsets[1], source);
    }

    private static Dtype parseDtype(JsonParser p, String name, String source) throws IOException {
        JsonToken t = p.nextToken();
        if (t != JsonToken.VALUE_STRING) {
            throw new SafetensorsException(Violation.UNKNOWN_DTYPE, source, name,
                    "dtype is " + describe(t));
        }
        String text = p.getText();
        Dtype dtype = Dtype.fromName(text);
        if (dtype == null) {
            throw new SafetensorsException(Violation.UNKNOWN_DTYPE, source, name,
                    "\"" + abbreviate(text) + "\"; known: " + Arrays.toString(Dtype.values()));
        }
        return dtype;
    }

    /** An array of integers in [0, 2^48-1]; exactly {@code arity} of them unless arity is -1. */
    private static long[] parseIntegers(JsonParser p, String name, String source, Violation rule, int arity)
            throws IOException {
        JsonToken t = p.nextToken();
        if (t != JsonToken.START_ARRAY) {
            throw new SafetensorsException(rule, source, name,
                    "found " + describe(t));
        }
        long[] values = new long[arity < 0 ? 4 : arity];
        int n = 0;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.VALUE_NUMBER_INT) {
                throw new SafetensorsException(rule, source, name,
                        "element " + n + " is " + describe(t));
            }
            JsonParser.NumberType type = p.getNumberType();
            if (type == JsonParser.NumberType.BIG_INTEGER) {
                throw new SafetensorsException(rule, source, name, "element " + n + " = " + abbreviate(p.getText())
                        + " exceeds 2^48-1");
            }
            long v = p.getLongValue();
            if (v < 0 || v > Header.MAX_DIMENSION) {
                throw new SafetensorsException(rule, source, name,
                        "element " + n + " = " + v + (v < 0 ? " is negative" : " exceeds 2^48-1"));
            }
            // serde_json reads -0 as a float, so the reference rejects it; so do we.
            if (v == 0 && p.getText().charAt(0) == '-') {
                throw new SafetensorsException(rule, source, name,
                        "element " + n + " is negative zero");
            }
            if (arity >= 0 && n >= arity) {
                throw new SafetensorsException(rule, source, name, "more than " + arity + " elements");
            }
            if (n == values.length) {
                values = Arrays.copyOf(values, n * 2);
            }
            values[n++] = v;
        }
        if (arity >= 0 && n != arity) {
            throw new SafetensorsException(rule, source, name, n + " elements instead of " + arity);
        }
        return n == values.length ? values : Arrays.copyOf(values, n);
    }

    /** Strict UTF-8 (no overlongs, no encoded surrogates), reporting the byte offset of the first error. */
    private static char[] decodeUtf8(byte[] bytes, String source) throws SafetensorsException {
        // Fast path: the JDK's String decoder applies the same strict rules but replaces what it
        // rejects with U+FFFD; without one in the result, the bytes were valid. Otherwise the
        // decoder below finds the first bad byte (or accepts a U+FFFD the file really holds).
        String fast = new String(bytes, StandardCharsets.UTF_8);
        if (fast.indexOf('\uFFFD') < 0) {
            return fast.toCharArray();
        }
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length); // UTF-8 never yields more chars than bytes
        CoderResult r = decoder.decode(in, out, true);
        if (!r.isError()) {
            r = decoder.flush(out);
        }
        if (r.isError()) {
            throw new SafetensorsException(Violation.HEADER_NOT_UTF8, source, null,
                    "invalid byte sequence at header byte " + in.position());
        }
        return out.position() == out.capacity() ? out.array() : Arrays.copyOf(out.array(), out.position());
    }

    private static void checkUnicode(String s, String source) throws SafetensorsException {
        HeaderRules.checkUnicode(s, source, null);
    }

    private static void expect(boolean ok, Violation rule, String source, String tensor, String detail)
            throws SafetensorsException {
        if (!ok) {
            throw new SafetensorsException(rule, source, tensor, detail);
        }
    }

    private static String describe(JsonToken t) {
        if (t == null) {
            return "the end of the header";
        }
        return switch (t) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT -> "an integer";
            case VALUE_NUMBER_FLOAT -> "a non-integer number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            case END_OBJECT -> "'}'";
            case END_ARRAY -> "']'";
            case FIELD_NAME -> "a key";
            default -> "an unexpected token";
        };
    }

    private static String describe(char c) {
        return c >= 0x20 && c < 0x7f ? "'" + c + "'" : String.format(Locale.ROOT, "U+%04X", (int) c);
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }
}
