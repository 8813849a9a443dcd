package io.github.semyonsinchenko.safetensors.io;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;

/**
 * Retry with exponential backoff for requests that can fail for a moment (ranged reads of remote
 * files, calls to an HTTP endpoint): how many attempts, how long to wait between them, and how a
 * failure that persists is reported ({@link RetryFailedException}: what failed, after how many
 * attempts, and the last error). Immutable and thread-safe; the project's one retry loop, used by the
 * chunked loader and the preprocessor's embedding client.
 *
 * <p>The wait after the {@code n}-th failed attempt is {@code firstBackoff * 2^(n-1)}, at most
 * {@code maxBackoff}, multiplied by a random factor in {@code [1 - jitter, 1 + jitter)} so that many
 * clients failing together do not retry together.
 */
public final class RetryPolicy {

    /**
     * One attempt of the request.
     *
     * @param <T> what a successful attempt returns
     */
    @FunctionalInterface
    public interface Attempt<T> {
        /**
         * Makes the request once.
         *
         * @return the request's result
         * @throws IOException if this attempt failed; the policy may retry it, while unchecked
         *     exceptions are never retried
         */
        T run() throws IOException;
    }

    private final int maxAttempts;
    private final Duration firstBackoff;
    private final Duration maxBackoff;
    private final double jitter;

    /**
     * A policy of {@code maxAttempts} attempts with waits from {@code firstBackoff} doubling to
     * {@code maxBackoff}.
     *
     * @param maxAttempts attempts in all (1 = no retry)
     * @param firstBackoff the wait after the first failure
     * @param maxBackoff the longest wait
     * @param jitter how far a wait may be moved at random, as a fraction of it, in {@code [0, 1)}
     * @throws IllegalArgumentException if {@code maxAttempts} is below 1, a backoff is negative,
     *     {@code maxBackoff} is below {@code firstBackoff}, or {@code jitter} is outside {@code [0, 1)}
     */
    public RetryPolicy(int maxAttempts, Duration firstBackoff, Duration maxBackoff, double jitter) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1, got " + maxAttempts);
        }
        Objects.requireNonNull(firstBackoff, "firstBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        if (firstBackoff.isNegative() || maxBackoff.compareTo(firstBackoff) < 0) {
            throw new IllegalArgumentException("backoffs must satisfy 0 <= firstBackoff <= maxBackoff, got "
                    + firstBackoff + " and " + maxBackoff);
        }
        if (!(jitter >= 0 && jitter < 1)) {
            throw new IllegalArgumentException("jitter must be in [0, 1), got " + jitter);
        }
        this.maxAttempts = maxAttempts;
        this.firstBackoff = firstBackoff;
        this.maxBackoff = maxBackoff;
        this.jitter = jitter;
    }

    /** {@return attempts in all, the first included (1 or more)} */
    public int maxAttempts() {
        return maxAttempts;
    }

    /**
     * The wait after the {@code failedAttempts}-th failure, before jitter.
     *
     * @param failedAttempts failures so far, 1 or more
     * @return {@code firstBackoff * 2^(failedAttempts-1)}, at most {@code maxBackoff}
     * @throws IllegalArgumentException if {@code failedAttempts} is below 1
     */
    public Duration backoff(int failedAttempts) {
        if (failedAttempts < 1) {
            throw new IllegalArgumentException("failedAttempts must be >= 1, got " + failedAttempts);
        }
        Duration d = firstBackoff;
        for (int i = 1; i < failedAttempts && d.compareTo(maxBackoff) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(maxBackoff) > 0 ? maxBackoff : d;
    }

    /**
     * Runs {@code attempt} until it returns, at most {@link #maxAttempts()} times, waiting
     * {@link #backoff} (with jitter) after each failure that {@code retryable} accepts. Unchecked
     * exceptions from an attempt pass through at once.
     *
     * @param <T> what a successful attempt returns
     * @param what the request, for the failure's message, e.g. {@code "reading s3a://b/m.safetensors [0, 64)"}
     * @param attempt the request
     * @param retryable which failures are worth another attempt
     * @param beforeRetry called before each wait (e.g. to count retries)
     * @return what the successful attempt returned
     * @throws RetryFailedException after an attempt failed with an error {@code retryable} rejects,
     *     after the last attempt failed, or when the thread was interrupted while waiting (its
     *     interrupt status is then set again)
     */
    public <T> T call(String what, Attempt<T> attempt, Predicate<? super IOException> retryable,
            Runnable beforeRetry) throws RetryFailedException {
        Objects.requireNonNull(what, "what");
        for (int n = 1; ; n++) {
            IOException failure;
            try {
                return attempt.run();
            } catch (IOException e) {
                failure = e;
            }
            if (n >= maxAttempts || !retryable.test(failure)) {
                throw new RetryFailedException(what, n, failure);
            }
            beforeRetry.run();
            try {
                Thread.sleep(withJitter(backoff(n)));
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                InterruptedIOException stop = new InterruptedIOException("interrupted while waiting to retry");
                stop.addSuppressed(failure);
                throw new RetryFailedException(what, n, stop);
            }
        }
    }

    private Duration withJitter(Duration d) {
        if (jitter == 0 || d.isZero()) {
            return d;
        }
        double factor = 1 - jitter + 2 * jitter * ThreadLocalRandom.current().nextDouble();
        return Duration.ofNanos((long) (d.toNanos() * factor));
    }

    @Override
    public String toString() {
        return "RetryPolicy[" + maxAttempts + " attempts, backoff " + firstBackoff + " doubling to " + maxBackoff
                + ", jitter " + jitter + "]";
    }
}
