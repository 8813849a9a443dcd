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

    private final Violation violation;
    private final String source;
    private final String tensor;

    public SafetensorsException(Violation violation, String source, String tensor, String detail) {
        this(violation, source, tensor, detail, null);
    }

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

    /** Which rule was broken. */
    public Violation violation() {
        return violation;
    }

    /** The file or stream description given when reading. */
    public String source() {
        return source;
    }

    /** The tensor (or metadata key) involved, or null when the violation concerns the whole header. */
    public String tensor() {
        return tensor;
    }
}
