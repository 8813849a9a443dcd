package io.github.semyonsinchenko.safetensors.options;

/**
 * A setting given by name and value (a Spark option, a loader property, a preprocessor setting)
 * that no one reads, or whose value is not allowed. The message names the surface, the option, the
 * value and what is allowed; each surface turns it into its own exception type (Spark's
 * {@code AnalysisException}, a CLI usage error, ...) without rewording it.
 */
public final class OptionException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** The option's name, as given. */
    private final String option;
    /** The value refused, or null. */
    private final String value;
    /** The valid values or names. */
    private final String allowed;

    OptionException(String option, String value, String allowed, String message) {
        super(message);
        this.option = option;
        this.value = value;
        this.allowed = allowed;
    }

    /** {@return the option's name, as given} */
    public String option() {
        return option;
    }

    /** {@return the value refused, or null when the name itself is unknown} */
    public String value() {
        return value;
    }

    /** {@return what is allowed instead: the valid values, or the valid names when the name is unknown} */
    public String allowed() {
        return allowed;
    }
}
