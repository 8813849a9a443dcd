package io.github.semyonsinchenko.safetensors.dataset;

import java.io.IOException;

/**
 * A dataset, its metadata or a commit that breaks a {@link DatasetRule}. The message names the file
 * (or dataset root), the rule and the detail, e.g. {@code /data/ds/dataset_manifest.json: a shard is
 * listed more than once (part-00000-....safetensors at positions 0 and 3)}. The Spark connector turns
 * it into an {@code AnalysisException} where a query is planned.
 */
public class DatasetException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The rule broken. */
    private final DatasetRule rule;
    /** The file or dataset root the message names. */
    private final String source;

    /**
     * A broken rule, without an underlying failure.
     *
     * @param rule the rule broken
     * @param source the file or dataset root concerned
     * @param detail what was found (may be null)
     */
    public DatasetException(DatasetRule rule, String source, String detail) {
        this(rule, source, detail, null);
    }

    /**
     * A broken rule found through an underlying failure.
     *
     * @param rule the rule broken
     * @param source the file or dataset root concerned
     * @param detail what was found (may be null)
     * @param cause the underlying failure (may be null)
     */
    public DatasetException(DatasetRule rule, String source, String detail, Throwable cause) {
        super(source + ": " + rule.rule() + (detail == null || detail.isEmpty() ? "" : " (" + detail + ")"), cause);
        this.rule = rule;
        this.source = source;
    }

    /** {@return which rule was broken} */
    public DatasetRule rule() {
        return rule;
    }

    /** {@return the file or dataset root the message names} */
    public String source() {
        return source;
    }
}
