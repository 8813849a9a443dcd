package io.github.semyonsinchenko.safetensors.preprocess;

/** The input cannot be preprocessed: the message names the file, table, column or task and the rule. */
public final class PreprocessException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** An error with {@code message}. */
    public PreprocessException(String message) {
        super(message);
    }

    /** An error with {@code message}, caused by {@code cause}. */
    public PreprocessException(String message, Throwable cause) {
        super(message, cause);
    }
}
