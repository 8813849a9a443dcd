package io.github.semyonsinchenko.safetensors.dataset;

/**
 * The rule a dataset, its metadata or a commit breaks. One constant per rule, so callers and tests
 * match on the rule rather than on message text (the dataset format's counterpart of the header's
 * {@code Violation}); {@link DatasetException} carries it.
 */
public enum DatasetRule {
    /** The manifest (or a history entry) exists but cannot be read: permissions, I/O. Never "absent". */
    MANIFEST_UNREADABLE("the manifest exists but cannot be read"),
    /** The manifest is not JSON, not an object, or a field has the wrong type or is missing. */
    MANIFEST_INVALID("the manifest is not a valid dataset manifest"),
    /** {@code write_mode} is present but neither {@code batch} nor {@code kv}. */
    UNKNOWN_WRITE_MODE("write_mode must be batch or kv"),
    /** A shard or index path is absolute, has a scheme, or leaves the dataset root ({@code ..}). */
    PATH_OUTSIDE_ROOT("every path a manifest names must stay inside the dataset root"),
    /** Two shard entries name the same file (after normalisation). */
    DUPLICATE_SHARD("a shard is listed more than once"),
    /** A shard's own {@code __metadata__} disagrees with the manifest: write_mode or kv_separator. */
    LAYOUT_MISMATCH("a shard's own metadata disagrees with the manifest's layout"),
    /** A shard's tensors disagree with the manifest's columns, dtypes or shapes. */
    SCHEMA_MISMATCH("a shard's tensors disagree with the manifest's schema"),
    /** The tensor index disagrees with the manifest or the shards it names. */
    INDEX_MISMATCH("the tensor index disagrees with the manifest or its shards"),
    /** The path already holds a committed dataset and the write must not replace or extend it. */
    ALREADY_EXISTS("the path already holds a committed dataset"),
    /** The new data does not fit the dataset it is appended to (layout, columns, dtypes, shapes). */
    APPEND_MISMATCH("the data does not fit the dataset it is appended to"),
    /** A key would appear twice in a kv dataset written with duplicatesStrategy=fail. */
    DUPLICATE_KEY("a key appears more than once in the dataset"),
    /**
     * Another commit took the version this one read first, and this one cannot be rebased on it
     * (an overwrite, a change of layout or schema, or too many attempts): {@link CommitConflictException}.
     */
    COMMIT_CONFLICT("another commit changed the dataset concurrently");

    private final String rule;

    DatasetRule(String rule) {
        this.rule = rule;
    }

    /** {@return the rule in words, as it appears in exception messages} */
    public String rule() {
        return rule;
    }
}
