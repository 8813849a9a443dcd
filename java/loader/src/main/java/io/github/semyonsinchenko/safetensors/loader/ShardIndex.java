package io.github.semyonsinchenko.safetensors.loader;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.JsonErrors;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.loader.CheckpointIndexException.Rule;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SequencedMap;
import java.util.SequencedSet;

/**
 * A Hugging Face shard-set index ({@code model.safetensors.index.json}): {@code weight_map} (tensor
 * name to the file name of its shard, next to the index) and {@code metadata.total_size} (the bytes
 * of all tensors). The one home of the index's rules: {@link #parse} checks the document,
 * {@link #check} checks it against the headers of the shards it names. Nothing in an index is
 * trusted: a tensor it places wrongly, one it forgets or one that two shards hold would otherwise
 * load a different model than the index describes.
 */
final class ShardIndex {
    private static final JsonFactory JSON = new JsonFactory();

    /** Finds the shard, among files next to the index that it does not name, holding a tensor (error messages only). */
    interface Elsewhere {
        /** The file name of a shard not named by the index that holds {@code tensor}, or null. */
        String shardHolding(String tensor) throws IOException;
    }

    private final String source;
    private final SequencedMap<String, String> weightMap;
    private final long totalSize;

    private ShardIndex(String source, SequencedMap<String, String> weightMap, long totalSize) {
        this.source = source;
        this.weightMap = weightMap;
        this.totalSize = totalSize;
    }

    /** The index's path, as given. */
    String source() {
        return source;
    }

    /** Tensor name to shard file name, in the index's order. */
    SequencedMap<String, String> weightMap() {
        return weightMap;
    }

    /** {@code metadata.total_size}, or -1 when the index gives none. */
    long totalSize() {
        return totalSize;
    }

    /** The shard file names, each once, in first-seen order. */
    SequencedSet<String> shardNames() {
        return new LinkedHashSet<>(weightMap.values());
    }

    /** Parses and checks an index document read from {@code source}. */
    static ShardIndex parse(byte[] json, String source) throws CheckpointIndexException {
        char[] text = new String(json, StandardCharsets.UTF_8).toCharArray();
        try (JsonParser p = JSON.createParser(text)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw notAnIndex(source, "an index must be a JSON object", p);
            }
            SequencedMap<String, String> map = null;
            long total = -1;
            List<String> seen = new ArrayList<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                if (seen.contains(field) && (field.equals("weight_map") || field.equals("metadata"))) {
                    throw notAnIndex(source, "the key \"" + field + "\" appears twice", p);
                }
                seen.add(field);
                JsonToken value = p.nextToken();
                if (field.equals("weight_map")) {
                    map = weightMap(p, value, source);
                } else if (field.equals("metadata") && value == JsonToken.START_OBJECT) {
                    total = totalSize(p, source);
                } else {
                    p.skipChildren();
                }
            }
            if (p.nextToken() != null) {
                throw notAnIndex(source, "content follows the index object", p);
            }
            if (map == null) {
                throw new CheckpointIndexException(Rule.NOT_AN_INDEX, source, null, List.of(),
                        "no \"weight_map\" object", null);
            }
            return new ShardIndex(source, map, total);
        } catch (JsonProcessingException e) {
            throw new CheckpointIndexException(Rule.MALFORMED, source, null, List.of(), JsonErrors.describe(e, text), e);
        } catch (CheckpointIndexException e) {
            throw e;
        } catch (IOException e) { // a parser over a char[] reads nothing: cannot happen
            throw new CheckpointIndexException(Rule.MALFORMED, source, null, List.of(), e.toString(), e);
        }
    }

    private static SequencedMap<String, String> weightMap(JsonParser p, JsonToken value, String source)
            throws IOException {
        if (value != JsonToken.START_OBJECT) {
            throw notAnIndex(source, "\"weight_map\" must be an object of tensor names to shard file names", p);
        }
        SequencedMap<String, String> map = new LinkedHashMap<>();
        Map<String, JsonLocation> where = new HashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String tensor = p.currentName();
            JsonLocation at = p.currentTokenLocation();
            JsonToken v = p.nextToken();
            if (v != JsonToken.VALUE_STRING) {
                throw notAnIndex(source, "weight_map[\"" + tensor + "\"] must be a shard file name, found "
                        + describe(v), p);
            }
            String shard = p.getText();
            if (shard.isEmpty() || shard.equals(".") || shard.equals("..") || shard.contains("/")
                    || shard.contains("\\")) {
                throw notAnIndex(source, "weight_map[\"" + tensor + "\"] names \"" + shard
                        + "\", which is not a file next to the index", p);
            }
            String first = map.putIfAbsent(tensor, shard);
            if (first != null) {
                JsonLocation firstAt = where.get(tensor);
                throw new CheckpointIndexException(Rule.LISTED_TWICE, source, tensor, List.of(first, shard),
                        String.format(Locale.ROOT, "weight_map lists it twice: in %s at %s and in %s at %s", first,
                                lineColumn(firstAt), shard, lineColumn(at)), null);
            }
            where.put(tensor, at);
        }
        if (map.isEmpty()) {
            throw notAnIndex(source, "weight_map lists no tensor", p);
        }
        return map;
    }

    private static long totalSize(JsonParser p, String source) throws IOException {
        long total = -1;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            if (!field.equals("total_size") || v == JsonToken.VALUE_NULL) {
                p.skipChildren();
                continue;
            }
            BigDecimal d = v.isNumeric() ? p.getDecimalValue() : null;
            if (d == null || d.signum() < 0 || d.stripTrailingZeros().scale() > 0
                    || d.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
                throw notAnIndex(source, "metadata.total_size must be a whole number of bytes, found "
                        + (d == null ? describe(v) : d.toPlainString()), p);
            }
            total = d.longValueExact();
        }
        return total;
    }

    /**
     * Checks the index against the headers of the shards it names ({@code headers}: shard file name
     * to header, one for each of {@link #shardNames()}), in this order: every tensor it lists is in
     * the shard it names and in no other; every tensor of those shards is listed; {@code total_size}
     * is the shards' tensor bytes. {@code elsewhere} only improves the message for a tensor no
     * named shard holds.
     *
     * @throws CheckpointIndexException at the first disagreement
     */
    void check(Map<String, Header> headers, Elsewhere elsewhere) throws IOException {
        Map<String, List<String>> holders = new HashMap<>();
        long bytes = 0;
        for (String shard : shardNames()) {
            Header h = headers.get(shard);
            if (h == null) {
                throw new IllegalArgumentException("no header for shard " + shard);
            }
            bytes += h.dataSize();
            for (TensorInfo t : h.tensors()) {
                holders.computeIfAbsent(t.name(), k -> new ArrayList<>(1)).add(shard);
            }
        }
        for (Map.Entry<String, String> e : weightMap.entrySet()) {
            String tensor = e.getKey();
            String listed = e.getValue();
            List<String> in = holders.getOrDefault(tensor, List.of());
            if (in.isEmpty()) {
                String other = elsewhere.shardHolding(tensor);
                if (other != null) {
                    throw wrongShard(tensor, listed, other);
                }
                throw new CheckpointIndexException(Rule.NOT_IN_SHARD, source, tensor, List.of(listed),
                        "the index lists it in " + listed + ", which does not hold it (no shard in "
                                + parentName() + " does)", null);
            }
            if (in.size() > 1) {
                throw new CheckpointIndexException(Rule.IN_TWO_SHARDS, source, tensor, in,
                        String.join(" and ", in) + " both hold it (the index lists it in " + listed
                                + "): it would be handed out twice", null);
            }
            if (!in.get(0).equals(listed)) {
                throw wrongShard(tensor, listed, in.get(0));
            }
        }
        for (String shard : shardNames()) {
            for (TensorInfo t : headers.get(shard).tensors()) {
                if (!weightMap.containsKey(t.name())) {
                    throw new CheckpointIndexException(Rule.NOT_LISTED, source, t.name(), List.of(shard),
                            shard + " holds it, but the index does not list it", null);
                }
            }
        }
        if (totalSize >= 0 && totalSize != bytes) {
            List<String> shards = List.copyOf(shardNames());
            throw new CheckpointIndexException(Rule.TOTAL_SIZE, source, null, shards, String.format(Locale.ROOT,
                    "metadata.total_size %d is not the %d bytes of tensors in its %d shard(s) (%s)", totalSize, bytes,
                    shards.size(), String.join(", ", shards)), null);
        }
    }

    private CheckpointIndexException wrongShard(String tensor, String listed, String actual) {
        return new CheckpointIndexException(Rule.WRONG_SHARD, source, tensor, List.of(listed, actual),
                "the index lists it in " + listed + ", but it is in " + actual, null);
    }

    private String parentName() {
        int slash = source.lastIndexOf('/', source.length() - 2);
        String dir = slash > 0 ? source.substring(0, slash) : source;
        return dir.substring(dir.lastIndexOf('/') + 1);
    }

    private static CheckpointIndexException notAnIndex(String source, String what, JsonParser p) {
        return new CheckpointIndexException(Rule.NOT_AN_INDEX, source, null, List.of(),
                what + " (at " + lineColumn(p.currentTokenLocation()) + ")", null);
    }

    private static String lineColumn(JsonLocation at) {
        return String.format(Locale.ROOT, "line %d, column %d", at.getLineNr(), at.getColumnNr());
    }

    private static String describe(JsonToken t) {
        if (t == null) {
            return "the end of the document";
        }
        return switch (t) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> t.toString();
        };
    }
}
