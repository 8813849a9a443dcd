package io.github.semyonsinchenko.safetensors.preprocess;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkException;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two lines of stages: both run their Spark jobs, and a failure on either cancels the other's
 * running job and ends the call with the original exception. A cancellation that did not work
 * would leave a job running forever: the timeouts turn that into a failure.
 */
class SideStagesTest {

    /** Counted down by the task of {@link #runUntilCancelled} once it runs (local mode: one JVM). */
    private static volatile CountDownLatch running;

    /** A job whose one task runs until Spark kills it. */
    private static void runUntilCancelled(SparkContext sc) {
        JavaSparkContext.fromSparkContext(sc).parallelize(List.of(1), 1).foreach(x -> {
            running.countDown();
            while (!TaskContext.get().isInterrupted()) {
                Thread.sleep(10);
            }
        });
    }

    private static long count(SparkContext sc, int n) {
        return JavaSparkContext.fromSparkContext(sc).parallelize(List.of(1, 2, 3, 4, 5, 6, 7, 8), 4)
                .filter(x -> x <= n).count();
    }

    @Test
    @Timeout(120)
    void bothLinesRunTheirJobsAndMainsResultIsReturned() throws IOException {
        SparkContext sc = SparkTestSession.get().sparkContext();
        AtomicReference<Long> side = new AtomicReference<>();
        long main = SideStages.beside(sc, "side", () -> side.set(count(sc, 3)), () -> count(sc, 5));
        assertEquals(5, main);
        assertEquals(3L, side.get());
    }

    @Test
    @Timeout(120)
    void aSideFailureCancelsTheMainLinesJobAndIsThrown() {
        SparkContext sc = SparkTestSession.get().sparkContext();
        running = new CountDownLatch(1);
        IOException boom = new IOException("side failed");
        IOException thrown = assertThrows(IOException.class, () -> SideStages.beside(sc, "side", () -> {
            awaitRunning();
            throw boom;
        }, () -> {
            runUntilCancelled(sc);
            return "main ended without its job cancelled";
        }));
        assertSame(boom, thrown);
        assertEquals(1, thrown.getSuppressed().length, "the main line's cancellation");
        assertInstanceOf(SparkException.class, thrown.getSuppressed()[0]);
        assertTrue(thrown.getSuppressed()[0].getMessage().contains("cancel"), thrown.getSuppressed()[0].getMessage());
    }

    @Test
    @Timeout(120)
    void aMainFailureCancelsTheSideLinesJobAndIsThrown() {
        SparkContext sc = SparkTestSession.get().sparkContext();
        running = new CountDownLatch(1);
        PreprocessException boom = new PreprocessException("main failed");
        AtomicReference<Throwable> sideSaw = new AtomicReference<>();
        PreprocessException thrown = assertThrows(PreprocessException.class, () -> SideStages.beside(sc, "side", () -> {
            try {
                runUntilCancelled(sc);
            } catch (Exception e) { // Spark's SparkException, undeclared
                sideSaw.set(e);
                throw e;
            }
        }, () -> {
            awaitRunning();
            throw boom;
        }));
        assertSame(boom, thrown);
        assertTrue(sideSaw.get() != null && sideSaw.get().getMessage().contains("cancel"), String.valueOf(sideSaw.get()));
        assertArrayEquals(new Throwable[] {sideSaw.get()}, thrown.getSuppressed());
    }

    @Test
    @Timeout(120)
    void theLaterJobsOfTheMainLineAreCancelledToo() {
        // The side line fails while the main line works on the driver; the main line's next job
        // must not run to its end either.
        SparkContext sc = SparkTestSession.get().sparkContext();
        running = new CountDownLatch(1);
        CountDownLatch sideFailed = new CountDownLatch(1);
        IOException boom = new IOException("side failed");
        IOException thrown = assertThrows(IOException.class, () -> SideStages.beside(sc, "side", () -> {
            sideFailed.countDown();
            throw boom;
        }, () -> {
            try {
                sideFailed.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            runUntilCancelled(sc);
            return "main ended without its job cancelled";
        }));
        assertSame(boom, thrown);
        assertInstanceOf(SparkException.class, thrown.getSuppressed()[0]);
    }

    private static void awaitRunning() {
        try {
            running.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
