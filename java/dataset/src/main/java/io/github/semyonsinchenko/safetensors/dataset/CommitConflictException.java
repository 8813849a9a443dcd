package io.github.semyonsinchenko.safetensors.dataset;

/**
 * A commit lost the race for the next version to another commit and cannot be rebased on it: the
 * other commit replaced the data this one read (an overwrite), changed the layout or the schema, or
 * the commit ran out of attempts. Nothing of this commit is visible; its shards are deleted. The
 * message names both versions: the one this commit read and the one it met.
 */
public final class CommitConflictException extends DatasetException {
    private static final long serialVersionUID = 1L;

    /** The version this commit read. */
    private final long readVersion;
    /** The version it met. */
    private final long conflictingVersion;
    /** The commit that made that version, or null. */
    private final String conflictingCommitId;

    /**
     * A conflict between this commit and a newer version.
     *
     * @param root the dataset root
     * @param readVersion the version this commit read and built on (0: no committed version)
     * @param conflictingVersion the version another commit made in the meantime
     * @param conflictingCommitId that commit's id (null when its manifest records none)
     * @param detail why this commit cannot simply be applied on top of it
     */
    public CommitConflictException(String root, long readVersion, long conflictingVersion, String conflictingCommitId,
                                   String detail) {
        super(DatasetRule.COMMIT_CONFLICT, root, "this commit read version " + readVersion + ", another commit"
                + (conflictingCommitId == null ? "" : " (" + conflictingCommitId + ")") + " made version "
                + conflictingVersion + " meanwhile: " + detail);
        this.readVersion = readVersion;
        this.conflictingVersion = conflictingVersion;
        this.conflictingCommitId = conflictingCommitId;
    }

    /** {@return the version this commit read and built on (0: no committed version)} */
    public long readVersion() {
        return readVersion;
    }

    /** {@return the version another commit made meanwhile} */
    public long conflictingVersion() {
        return conflictingVersion;
    }

    /** {@return that commit's id, or null when its manifest records none} */
    public String conflictingCommitId() {
        return conflictingCommitId;
    }
}
