package io.github.semyonsinchenko.safetensors.preprocess;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.SparkContext;

/**
 * Stages that run on a second driver thread beside the build's main line. Between its Spark jobs
 * a stage works on the driver alone (assembling files, folding, building key maps) and one task of
 * few runs last: with two lines of stages, the other line's jobs fill those cores. Spark's
 * scheduler takes jobs from several threads at once.
 *
 * <p>A failure on either line cancels the other's Spark jobs and then ends the build with the
 * first failure, once both threads have ended (so nothing writes into the build's directory after
 * it is deleted).
 */
final class SideStages {
    private SideStages() {}

    /** How often a failed line cancels the other's jobs until that line has ended. */
    private static final long CANCEL_MILLIS = 50;

    @FunctionalInterface
    interface Side {
        void run() throws IOException;
    }

    @FunctionalInterface
    interface Main<T> {
        T run() throws IOException;
    }

    /**
     * Runs {@code side} on a new thread named {@code name} while {@code main} runs on this one,
     * and returns {@code main}'s result once both have ended. Throws the first failure of either,
     * with the other line's failure (often its cancellation) added as suppressed.
     */
    static <T> T beside(SparkContext sc, String name, Side side, Main<T> main) throws IOException {
        // Both lines' jobs carry one tag: the line that fails has no job running, so cancelling the
        // tag cancels the other's. A tag adds to any job group or tag of the caller's.
        String tag = "safetensors-preprocess-" + UUID.randomUUID();
        AtomicReference<Throwable> first = new AtomicReference<>();
        AtomicReference<Throwable> sideFailure = new AtomicReference<>();
        AtomicBoolean mainEnded = new AtomicBoolean();
        Thread thread = new Thread(() -> {
            sc.addJobTag(tag);
            try {
                side.run();
            } catch (Throwable e) {
                sideFailure.set(e);
                // The main line may be between jobs when this is first cancelled; cancel its next ones too.
                if (first.compareAndSet(null, e)) {
                    while (!mainEnded.get()) {
                        sc.cancelJobsWithTag(tag);
                        sleep(CANCEL_MILLIS);
                    }
                }
            } finally {
                sc.removeJobTag(tag);
            }
        }, name);
        thread.setDaemon(true); // a failed build must not keep the JVM alive
        thread.start(); // before this thread's tag: a new thread inherits the Spark properties of its parent
        T result = null;
        Throwable mainFailure = null;
        sc.addJobTag(tag);
        try {
            result = main.run();
        } catch (Throwable e) {
            mainFailure = e;
            first.compareAndSet(null, e);
        } finally {
            sc.removeJobTag(tag);
            mainEnded.set(true);
        }
        boolean interrupted = false;
        while (thread.isAlive()) {
            if (first.get() != null) {
                sc.cancelJobsWithTag(tag);
            }
            try {
                thread.join(CANCEL_MILLIS);
            } catch (InterruptedException e) {
                // Our caller gives up: cancel the side line, and wait for it all the same.
                interrupted = true;
                first.compareAndSet(null, new InterruptedIOException("interrupted while waiting for " + name));
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        Throwable failure = first.get();
        if (failure == null) {
            return result;
        }
        Throwable other = failure == mainFailure ? sideFailure.get() : mainFailure;
        if (other != null && other != failure) {
            failure.addSuppressed(other);
        }
        throw SideStages.<RuntimeException>rethrow(failure);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Throws {@code t} itself, whatever it is: the build fails with the original exception, and
     * Spark's are checked ({@code SparkException}) though no Java signature declares them.
     */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E rethrow(Throwable t) throws E {
        throw (E) t;
    }
}
