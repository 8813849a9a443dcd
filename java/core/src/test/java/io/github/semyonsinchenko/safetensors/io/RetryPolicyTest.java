package io.github.semyonsinchenko.safetensors.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
    private static final RetryPolicy FOUR = new RetryPolicy(4, Duration.ofMillis(1), Duration.ofMillis(4), 0);

    @Test
    void backoffDoublesUpToItsCap() {
        RetryPolicy p = new RetryPolicy(10, Duration.ofMillis(100), Duration.ofSeconds(2), 0.5);
        assertEquals(Duration.ofMillis(100), p.backoff(1));
        assertEquals(Duration.ofMillis(200), p.backoff(2));
        assertEquals(Duration.ofMillis(1600), p.backoff(5));
        assertEquals(Duration.ofSeconds(2), p.backoff(6));
        assertEquals(Duration.ofSeconds(2), p.backoff(1_000));
        assertEquals(Duration.ZERO, new RetryPolicy(3, Duration.ZERO, Duration.ZERO, 0).backoff(2));
    }

    @Test
    void transientFailuresAreRetriedAndCounted() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger retries = new AtomicInteger();
        String got = FOUR.call("reading x", () -> {
            if (calls.incrementAndGet() < 3) {
                throw new EOFException("short read");
            }
            return "bytes";
        }, e -> true, retries::incrementAndGet);
        assertEquals("bytes", got);
        assertEquals(3, calls.get());
        assertEquals(2, retries.get());
    }

    @Test
    void aPersistentFailureSaysWhatFailedAfterHowManyAttemptsOnce() {
        AtomicInteger calls = new AtomicInteger();
        EOFException last = new EOFException("Read past End of File");
        RetryFailedException e = assertThrows(RetryFailedException.class, () -> FOUR.call("reading m [0, 64)", () -> {
            calls.incrementAndGet();
            throw last;
        }, x -> true, () -> {}));
        assertEquals(4, calls.get());
        assertEquals(4, e.attempts());
        assertSame(last, e.getCause());
        assertEquals("reading m [0, 64) failed after 4 attempts: Read past End of File", e.getMessage());
    }

    @Test
    void aFailureNotWorthRetryingEndsAtOnce() {
        RetryFailedException e = assertThrows(RetryFailedException.class, () -> FOUR.call("reading gone", () -> {
            throw new FileNotFoundException("gone: no such file");
        }, x -> !(x instanceof FileNotFoundException), () -> {
            throw new AssertionError("no retry");
        }));
        assertEquals(1, e.attempts());
        assertEquals("reading gone failed after 1 attempt: gone: no such file", e.getMessage());
        // Unchecked exceptions are the caller's: they pass through untouched.
        IllegalStateException bug = new IllegalStateException("closed");
        assertSame(bug, assertThrows(IllegalStateException.class, () -> FOUR.call("x", () -> {
            throw bug;
        }, x -> true, () -> {})));
    }

    @Test
    void anInterruptDuringTheWaitStopsWithTheInterruptKept() {
        RetryPolicy slow = new RetryPolicy(5, Duration.ofSeconds(30), Duration.ofSeconds(30), 0);
        Thread.currentThread().interrupt();
        try {
            RetryFailedException e = assertThrows(RetryFailedException.class, () -> slow.call("calling y", () -> {
                throw new IOException("status 503");
            }, x -> true, () -> {}));
            assertTrue(Thread.currentThread().isInterrupted());
            assertEquals(1, e.attempts());
            assertInstanceOf(InterruptedIOException.class, e.getCause());
            assertEquals("status 503", e.getCause().getSuppressed()[0].getMessage());
            assertEquals("calling y failed after 1 attempt: interrupted while waiting to retry", e.getMessage());
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void badSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new RetryPolicy(0, Duration.ZERO, Duration.ZERO, 0));
        assertThrows(IllegalArgumentException.class,
                () -> new RetryPolicy(2, Duration.ofSeconds(2), Duration.ofSeconds(1), 0));
        assertThrows(IllegalArgumentException.class, () -> new RetryPolicy(2, Duration.ZERO, Duration.ZERO, 1.0));
    }
}
