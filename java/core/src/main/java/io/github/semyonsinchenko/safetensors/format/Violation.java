package io.github.semyonsinchenko.safetensors.format;

/**
 * The rule a malformed file breaks. One constant per rule, in the order the checks run, so
 * callers (and tests) can match on the rule rather than on message text.
 */
public enum Violation {
    /** The file is shorter than the 8-byte little-endian header length. */
    HEADER_LENGTH_TRUNCATED("the file is shorter than the 8-byte header length prefix"),
    /** N is larger than {@link Header#MAX_HEADER_BYTES}. */
    HEADER_TOO_LARGE("the header length exceeds the 100,000,000-byte limit"),
    /** 8 + N is past the end of the file. */
    HEADER_PAST_EOF("the header extends past the end of the file"),
    /** The header bytes are not valid UTF-8. */
    HEADER_NOT_UTF8("the header is not valid UTF-8"),
    /** The header is not one JSON object, optionally padded with 0x20 spaces. */
    HEADER_NOT_JSON_OBJECT("the header is not a single JSON object padded only with 0x20 spaces"),
    /** The same key appears twice in an object of the header. */
    DUPLICATE_KEY("a key appears more than once"),
    /** __metadata__ is not an object whose values are all strings. */
    METADATA_NOT_STRING_MAP("__metadata__ must be an object mapping strings to strings"),
    /** A tensor entry is not an object with exactly dtype, shape and data_offsets. */
    TENSOR_FIELDS("a tensor entry must be an object with exactly the fields dtype, shape and data_offsets"),
    /** dtype is not one of {@link Dtype}. */
    UNKNOWN_DTYPE("the dtype is not one of the known dtypes"),
    /** A shape entry is not an integer in [0, 2^48 - 1]. */
    INVALID_SHAPE("shape must be an array of integers in [0, 2^48-1]"),
    /** data_offsets is not two integers in [0, 2^48 - 1] with begin &lt;= end. */
    INVALID_OFFSETS("data_offsets must be two integers [begin, end] in [0, 2^48-1] with begin <= end"),
    /** The element count times the dtype's bits overflows. */
    SIZE_OVERFLOW("the element count times the bits per element overflows"),
    /** The tensor's bit count is not a multiple of 8. */
    MISALIGNED_SIZE("the tensor's total bit count is not a multiple of 8"),
    /** end - begin differs from what dtype and shape require. */
    SIZE_MISMATCH("end - begin differs from the byte size implied by dtype and shape"),
    /** A tensor starts after the previous one ends (or the first one after 0). */
    OFFSET_GAP("the tensors' byte ranges leave a gap"),
    /** A tensor starts before the previous one ends. */
    OFFSET_OVERLAP("the tensors' byte ranges overlap"),
    /** The file ends before the last tensor's data does. */
    DATA_TRUNCATED("the file ends before the last tensor's data"),
    /** Bytes follow the last tensor's data. */
    TRAILING_BYTES("bytes follow the last tensor's data"),
    /**
     * Reading (or writing) a mapped file faulted: another process truncated or replaced it while it
     * was mapped. Not a header rule; thrown by reads of the data, inside a
     * {@link io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException}.
     */
    FILE_CHANGED_WHILE_MAPPED("the file was truncated or replaced while mapped (pages past its new end are gone)");

    private final String rule;

    Violation(String rule) {
        this.rule = rule;
    }

    /** {@return the rule in words, as it appears in exception messages} */
    public String rule() {
        return rule;
    }
}
