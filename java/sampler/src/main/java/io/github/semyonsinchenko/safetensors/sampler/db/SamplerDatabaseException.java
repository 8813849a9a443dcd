package io.github.semyonsinchenko.safetensors.sampler.db;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * A database directory breaks a rule of the format: names the file, the rule, what was expected
 * and what was found.
 */
public final class SamplerDatabaseException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The rule broken. */
    private final DatabaseRule rule;
    private final transient Path file;
    /** What the rule expected. */
    private final String expected;
    /** What was found. */
    private final String actual;

    /**
     * A broken rule.
     *
     * @param rule the rule broken
     * @param file the file that breaks it
     * @param expected what the rule expected, in words
     * @param actual what was found
     */
    public SamplerDatabaseException(DatabaseRule rule, Path file, String expected, String actual) {
        this(rule, file, expected, actual, null);
    }

    /**
     * A broken rule found through another failure, e.g. a JSON parse error.
     *
     * @param rule the rule broken
     * @param file the file that breaks it
     * @param expected what the rule expected, in words
     * @param actual what was found
     * @param cause the underlying failure, or null
     */
    public SamplerDatabaseException(DatabaseRule rule, Path file, String expected, String actual, Throwable cause) {
        super(String.format(Locale.ROOT, "%s: %s [%s]: expected %s, found %s", file, rule.description(), rule,
                expected, actual), cause);
        this.rule = rule;
        this.file = file;
        this.expected = expected;
        this.actual = actual;
    }

    /**
     * The rule broken.
     *
     * @return the rule
     */
    public DatabaseRule rule() {
        return rule;
    }

    /**
     * The file that breaks the rule (not serialized: null after deserialization).
     *
     * @return the file
     */
    public Path file() {
        return file;
    }

    /**
     * What the rule expected.
     *
     * @return the expectation, in words
     */
    public String expected() {
        return expected;
    }

    /**
     * What was found instead.
     *
     * @return the finding, in words
     */
    public String actual() {
        return actual;
    }
}
