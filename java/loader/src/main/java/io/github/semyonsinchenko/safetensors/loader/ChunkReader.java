package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.io.RetryFailedException;
import io.github.semyonsinchenko.safetensors.io.RetryPolicy;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.AccessDeniedException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.function.BooleanSupplier;
import org.apache.hadoop.fs.FSDataInputStream;

/**
 * Fills a chunk's buffer on the loader's threads: the buffer is allocated, then each of the chunk's
 * ranges is requested concurrently ({@link RangeReads}), each request retried with backoff as the
 * {@link RetryPolicy} says; a failure that persists is a {@link ChunkReadException}.
 */
final class ChunkReader {
    private final ExecutorService executor;
    private final Map<String, CheckpointResolver.Listed> listed;
    private final RetryPolicy retry;
    private final LoadStats stats;

    ChunkReader(ExecutorService executor, Map<String, CheckpointResolver.Listed> listed, RetryPolicy retry,
            LoadStats stats) {
        this.executor = executor;
        this.listed = listed;
        this.retry = retry;
        this.stats = stats;
    }

    /**
     * Starts reading {@code buffer}'s chunk; no request starts once {@code closed} says so.
     *
     * @return completes when every byte arrived, or exceptionally with the failure
     */
    CompletableFuture<Void> read(ChunkBuffer buffer, BooleanSupplier closed) {
        Chunk c = buffer.chunk;
        CompletableFuture<Void> allocated = CompletableFuture.runAsync(buffer::allocate, executor);
        return allocated.thenCompose(v -> {
            List<CompletableFuture<Void>> parts = new ArrayList<>(c.ranges().size());
            for (Chunk.Range r : c.ranges()) {
                parts.add(CompletableFuture.runAsync(() -> readRange(buffer, r, closed), executor));
            }
            return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new));
        });
    }

    private void readRange(ChunkBuffer buffer, Chunk.Range range, BooleanSupplier closed) {
        Chunk c = buffer.chunk;
        CheckpointResolver.Listed file = listed.get(c.file());
        MemorySegment dst = buffer.segment().asSlice(range.bufferOffset(), range.length());
        try {
            retry.call("reading " + c.describe(), () -> {
                if (closed.getAsBoolean()) {
                    throw new CancellationException("the loader was closed");
                }
                stats.dataRequests.incrementAndGet();
                try (FSDataInputStream in = RangeReads.open(file.fs(), file.status())) {
                    RangeReads.readInto(in, range.offset(), dst, c.file());
                } catch (UncheckedIOException e) {
                    throw e.getCause();
                }
                stats.dataBytes.addAndGet(range.length());
                return null;
            }, ChunkReader::retryable, stats.retries::incrementAndGet);
        } catch (RetryFailedException e) {
            throw new CompletionException(new ChunkReadException(c, e));
        }
    }

    /** A missing file or a refused access will not get better by asking again. */
    private static boolean retryable(IOException e) {
        return !(e instanceof FileNotFoundException || e instanceof AccessDeniedException
                || e instanceof InterruptedIOException);
    }
}
