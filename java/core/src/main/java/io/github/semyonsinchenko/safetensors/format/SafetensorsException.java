package io.github.semyonsinchenko.safetensors.format;

import java.io.IOException;

/**
 * A file, stream or header that breaks a safetensors rule. The message names the source (file
 * path or a description of the stream), the tensor when one is involved, the rule and the
 * offending detail, e.g.
 * {@code model.safetensors: tensor "w": end - begin differs from the byte size implied by dtype
 * and shape (data_offsets [0, 12], but F32 [2, 2] needs 16 bytes)}.
 */
public final class SafetensorsException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The rule broken. */
    private final Violation violation;
    /** The file or stream, or null. */
    private final String source;
    /** The tensor or metadata key involved, or null. */
    private final String tensor;

    /**
     * An exception whose message names the source, the tensor, the rule and the detail.
     *
     * @param violation the rule broken
     * @param source the file or stream, or null ("&lt;unnamed source&gt;" in the message)
     * @param tensor the tensor or metadata key involved, or null when the whole header is at fault
     * @param detail the offending values in words, or null
     */
    public SafetensorsException(Violation violation, String source, String tensor, String detail) {
        this(violation, source, tensor, detail, null);
    }

    /**
     * The same with the exception that revealed the violation.
     *
     * @param violation the rule broken
     * @param source the file or stream, or null
     * @param tensor the tensor or metadata key involved, or null
     * @param detail the offending values in words, or null
     * @param cause the underlying exception, or null
     */
    public SafetensorsException(Violation violation, String source, String tensor, String detail, Throwable cause) {
        super(format(violation, source, tensor, detail), cause);
        this.violation = violation;
        this.source = source;
        this.tensor = tensor;
    }

    private static String format(Violation violation, String source, String tensor, String detail) {
        StringBuilder sb = new StringBuilder();
        sb.append(source == null ? "<unnamed source>" : source).append(": ");
        if (tensor != null) {
            sb.append("tensor \"").append(tensor).append("\": ");
        }
        sb.append(violation.rule());
        if (detail != null && !detail.isEmpty()) {
            sb.append(" (").append(detail).append(')');
        }
        return sb.toString();
    }

    /** {@return which rule was broken} */
    public Violation violation() {
        return violation;
    }

    /** {@return the file or stream description given when reading, or null} */
    public String source() {
        return source;
    }

    /** {@return the tensor (or metadata key) involved, or null when the violation concerns the whole header} */
    public String tensor() {
        return tensor;
    }
}
