package io.github.semyonsinchenko.safetensors.io;

import java.io.IOException;
import java.util.Locale;

/**
 * A request that {@link RetryPolicy#call} gave up on: the message says what failed, after how many
 * attempts, and why the last one failed, e.g. {@code reading s3a://b/m.safetensors [0, 64) failed
 * after 4 attempts: Read past End of File}; the cause is the last attempt's error.
 */
public final class RetryFailedException extends IOException {
    private static final long serialVersionUID = 1L;

    /** Attempts made, the failed last one included. */
    private final int attempts;

    RetryFailedException(String what, int attempts, IOException last) {
        super(String.format(Locale.ROOT, "%s failed after %d attempt%s: %s", what, attempts, attempts == 1 ? "" : "s",
                last.getMessage() == null ? last.toString() : last.getMessage()), last);
        this.attempts = attempts;
    }

    /** {@return attempts made, the failed last one included} */
    public int attempts() {
        return attempts;
    }

    @Override
    public synchronized IOException getCause() {
        return (IOException) super.getCause();
    }
}
