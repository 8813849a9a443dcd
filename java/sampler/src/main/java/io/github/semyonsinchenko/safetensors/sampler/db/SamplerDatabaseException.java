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

    private final DatabaseRule rule;
    private final transient Path file;
    private final String expected;
    private final String actual;

    public SamplerDatabaseException(DatabaseRule rule, Path file, String expected, String actual) {
        this(rule, file, expected, actual, null);
    }

    public SamplerDatabaseException(DatabaseRule rule, Path file, String expected, String actual, Throwable cause) {
        super(String.format(Locale.ROOT, "%s: %s [%s]: expected %s, found %s", file, rule.description(), rule,
                expected, actual), cause);
        this.rule = rule;
        this.file = file;
        this.expected = expected;
        this.actual = actual;
    }

    public DatabaseRule rule() {
        return rule;
    }

    public Path file() {
        return file;
    }

    public String expected() {
        return expected;
    }

    public String actual() {
        return actual;
    }
}
