package io.github.semyonsinchenko.safetensors.loader;

import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * A Hugging Face shard-set index ({@code model.safetensors.index.json}) that is malformed or that
 * disagrees with the headers of the shards it names. {@link SafetensorsLoader#open} throws it after
 * the metadata pass, before any tensor byte is read. The message names the index, the tensor and the
 * shards involved, e.g. {@code s3a://bucket/model.safetensors.index.json: tensor "lm_head.weight":
 * the index lists it in model-00002-of-00002.safetensors, but it is in model-00001-of-00002.safetensors}.
 */
public final class CheckpointIndexException extends IOException {
    private static final long serialVersionUID = 1L;

    /** Which rule of the index the file breaks. */
    public enum Rule {
        /** Not JSON: the message gives the line and column. */
        MALFORMED,
        /** JSON, but not an index: no {@code weight_map} object, a value that is not a shard file name, a bad {@code total_size}. */
        NOT_AN_INDEX,
        /** {@code weight_map} lists the tensor twice. */
        LISTED_TWICE,
        /** The shard the index names does not hold the tensor, and neither does any other shard next to the index. */
        NOT_IN_SHARD,
        /** The shard the index names does not hold the tensor; another shard does. */
        WRONG_SHARD,
        /** Two shards hold the tensor: one of them would be handed out as well as the other. */
        IN_TWO_SHARDS,
        /** A shard the index names holds a tensor the index does not list. */
        NOT_LISTED,
        /** {@code metadata.total_size} is not the number of tensor bytes in the shards. */
        TOTAL_SIZE
    }

    /** The rule broken. */
    private final Rule rule;
    /** The index file's full path. */
    private final String index;
    /** The tensor involved, or null. */
    private final String tensor;
    /** The shard file names involved, as the index writes them. */
    private final String[] shards;

    CheckpointIndexException(Rule rule, String index, String tensor, List<String> shards, String detail,
            Throwable cause) {
        super(index + ": " + (tensor == null ? "" : "tensor \"" + tensor + "\": ") + detail, cause);
        this.rule = Objects.requireNonNull(rule, "rule");
        this.index = Objects.requireNonNull(index, "index");
        this.tensor = tensor;
        this.shards = shards.toArray(String[]::new);
    }

    /** {@return the rule broken} */
    public Rule rule() {
        return rule;
    }

    /** {@return the index file (its full path)} */
    public String index() {
        return index;
    }

    /** {@return the tensor involved, or null when the defect is not one tensor's (malformed JSON, {@code total_size})} */
    public String tensor() {
        return tensor;
    }

    /** {@return the shard file names involved (as the index writes them), in the order the message gives them; may be empty} */
    public List<String> shards() {
        return List.of(shards);
    }
}
