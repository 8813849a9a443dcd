package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.RetryFailedException;
import io.github.semyonsinchenko.safetensors.io.RetryPolicy;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.HugePages;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.AccessDeniedException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.fs.FSDataInputStream;

/**
 * Loads a safetensors checkpoint from any Hadoop {@code FileSystem} in few large reads.
 *
 * <pre>{@code
 * LoaderConfig config = LoaderConfig.fromEnvironment().rank(rank, worldSize).hadoopConf(conf).build();
 * try (SafetensorsLoader loader = SafetensorsLoader.open(config, List.of("s3a://bucket/model/"))) {
 *     for (LoadedTensor t : loader) {
 *         try (t) {
 *             use(t.name(), t.dtype(), t.shape(), t.data());
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>{@link #open} runs the metadata pass and builds the {@link ChunkPlan}; iteration hands out
 * this rank's tensors (or all, with {@code readAll}) in plan order while the next chunks load in
 * the background on the loader's own threads, within the byte budget. A chunk is handed out only
 * when every byte of it has arrived and its length checked; a request that fails is retried with
 * backoff, and a failure that persists is a {@link ChunkReadException} naming the file, the range
 * and the tensors. One consumer thread iterates; tensors may be closed from any thread.
 */
public final class SafetensorsLoader implements AutoCloseable, Iterable<LoadedTensor> {
    private static final AtomicInteger POOL_IDS = new AtomicInteger();
    /** With {@code hugePages}, chunks from this size on go into transparent huge pages (where core's HugePages gets them). */
    static final long HUGE_PAGE_MIN_BYTES = 4 * HugePages.HUGE_PAGE_BYTES;

    private final LoaderConfig config;
    private final List<CheckpointFile> files;
    private final ChunkPlan plan;
    private final List<Chunk> toRead;
    private final Map<String, CheckpointResolver.Listed> listed;
    private final ExecutorService executor;
    private final LoadStats stats;
    private final Slot[] slots;
    private final RetryPolicy retry;
    private final Set<Arena> convertedArenas = ConcurrentHashMap.newKeySet();

    // Scheduling state, guarded by "this".
    private int nextToSubmit;
    private int consumePos;
    private int inFlight;
    private long residentBytes;
    private long peakResidentBytes;
    private boolean closed;

    // Consumer state (one consumer thread).
    private int tensorInChunk;
    private boolean currentReady;

    private SafetensorsLoader(LoaderConfig config, List<CheckpointFile> files, ChunkPlan plan,
                              Map<String, CheckpointResolver.Listed> listed, ExecutorService executor,
                              LoadStats stats) {
        this.config = config;
        this.files = List.copyOf(files);
        this.plan = plan;
        this.toRead = config.readAll() ? plan.chunks() : plan.owned(config.rank(), config.worldSize());
        this.listed = listed;
        this.executor = executor;
        this.stats = stats;
        this.retry = config.retryPolicy();
        this.slots = new Slot[toRead.size()];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot(toRead.get(i));
        }
    }

    /** Resolves {@code paths} (files, directories, globs, {@code *.index.json}), reads the headers and plans. */
    public static SafetensorsLoader open(LoaderConfig config, List<String> paths) throws IOException {
        LoadStats stats = new LoadStats();
        ExecutorService executor = newExecutor(config.workerThreads());
        try {
            CheckpointResolver resolver = new CheckpointResolver(config.hadoopConf(), config.metadataCache(),
                    config.speculativeHeaderBytes(), stats);
            List<CheckpointResolver.Listed> found = resolver.resolve(paths);
            List<CheckpointFile> files = resolver.headers(found, executor);
            Map<String, CheckpointResolver.Listed> byPath = new HashMap<>();
            for (CheckpointResolver.Listed l : found) {
                byPath.put(l.path(), l);
            }
            ChunkPlan plan = ChunkPlan.of(files, config.chunkBytes(), config.requestBytesFor(byPath.keySet()),
                    config.legacy());
            return new SafetensorsLoader(config, files, plan, byPath, executor, stats);
        } catch (IOException | RuntimeException | Error e) {
            executor.shutdownNow();
            throw e;
        }
    }

    public static SafetensorsLoader open(LoaderConfig config, String... paths) throws IOException {
        return open(config, List.of(paths));
    }

    private static ExecutorService newExecutor(int threads) {
        int pool = POOL_IDS.incrementAndGet();
        AtomicInteger ids = new AtomicInteger();
        ThreadFactory factory = r -> {
            Thread t = new Thread(r, "safetensors-loader-" + pool + "-" + ids.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        return Executors.newFixedThreadPool(threads, factory);
    }

    public LoaderConfig config() {
        return config;
    }

    /** The files of the checkpoint with their headers, in the order they were found. */
    public List<CheckpointFile> files() {
        return files;
    }

    /** The whole plan (every rank's chunks). */
    public ChunkPlan plan() {
        return plan;
    }

    /** The chunks this loader reads: this rank's, or all of them in all-ranks mode. */
    public List<Chunk> chunksToRead() {
        return toRead;
    }

    public LoadStats stats() {
        return stats;
    }

    /** Chunk bytes held now (loaded or loading, not yet freed). */
    public synchronized long residentBytes() {
        return residentBytes;
    }

    /** The most chunk bytes held at once so far. */
    public synchronized long peakResidentBytes() {
        return peakResidentBytes;
    }

    /**
     * The next tensor in plan order, or {@code null} when all are handed out. Blocks until its chunk
     * has arrived.
     *
     * @throws ChunkReadException when its chunk could not be read
     */
    public LoadedTensor next() throws IOException {
        while (true) {
            Slot slot;
            synchronized (this) {
                if (closed) {
                    throw new IllegalStateException("the loader is closed");
                }
                if (currentReady && tensorInChunk == slots[consumePos].chunk.tensors().size()) {
                    consumePos++;
                    currentReady = false;
                    tensorInChunk = 0;
                }
                if (consumePos >= slots.length) {
                    return null;
                }
                pump();
                slot = slots[consumePos];
            }
            if (!currentReady) {
                await(slot);
                currentReady = true;
            }
            if (tensorInChunk < slot.chunk.tensors().size()) {
                return handOut(slot, slot.chunk.tensors().get(tensorInChunk++));
            }
        }
    }

    private void await(Slot slot) throws IOException {
        try {
            slot.future.join();
        } catch (CompletionException | CancellationException e) {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof ChunkReadException cre) {
                throw new ChunkReadException(cre); // this thread's stack, same message
            }
            throw new ChunkReadException(slot.chunk, cause);
        }
    }

    private LoadedTensor handOut(Slot slot, PlannedTensor t) {
        stats.tensorsHandedOut.incrementAndGet();
        MemorySegment bytes = slot.segment.asSlice(t.offsetInChunk(), t.byteSize()).asReadOnly();
        Dtype target = config.convertTo();
        Conversion conversion = target == null || target == t.dtype() || !isFloat(t.dtype())
                ? null : Conversion.of(t.dtype(), target).orElse(null);
        if (conversion == null) {
            return new LoadedTensor(slot.chunk.file(), t.name(), t.dtype(), t.dtype(), t.info().shape(), bytes,
                    slot::release);
        }
        long count = t.info().elementCount();
        Arena arena = Arena.ofShared();
        try {
            MemorySegment out = arena.allocate(Math.max(1, count * conversion.targetBytes()), 64)
                    .asSlice(0, count * conversion.targetBytes());
            Kernels.convert(conversion, bytes, out, count);
            convertedArenas.add(arena);
            return new LoadedTensor(slot.chunk.file(), t.name(), target, t.dtype(), t.info().shape(),
                    out.asReadOnly(), () -> {
                        if (convertedArenas.remove(arena)) {
                            arena.close();
                        }
                    });
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        } finally {
            slot.release(); // the converted copy no longer needs the chunk
        }
    }

    private static boolean isFloat(Dtype d) {
        return d == Dtype.F16 || d == Dtype.BF16 || d == Dtype.F32 || d == Dtype.F64;
    }

    /** Starts reads while the rules allow; the consumer's chunk is always admitted. Caller holds the lock. */
    private void pump() {
        while (!closed && nextToSubmit < slots.length) {
            Chunk c = slots[nextToSubmit].chunk;
            boolean needed = nextToSubmit == consumePos;
            boolean withinDepth = nextToSubmit - consumePos <= config.prefetchDepth();
            boolean fits = residentBytes + c.byteSize() <= config.byteBudget();
            if (!needed && !(withinDepth && fits && inFlight < config.maxConcurrentChunks())) {
                return;
            }
            submit(slots[nextToSubmit++]);
        }
    }

    private void submit(Slot slot) {
        Chunk c = slot.chunk;
        inFlight++;
        residentBytes += c.byteSize();
        peakResidentBytes = Math.max(peakResidentBytes, residentBytes);
        slot.refs.set(c.tensors().size());
        CompletableFuture<Void> allocated = CompletableFuture.runAsync(slot::allocate, executor);
        slot.future = allocated.thenCompose(v -> {
            List<CompletableFuture<Void>> parts = new ArrayList<>(c.ranges().size());
            for (Chunk.Range r : c.ranges()) {
                parts.add(CompletableFuture.runAsync(() -> readRange(slot, r), executor));
            }
            return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new));
        }).whenComplete((v, e) -> {
            if (e == null) {
                stats.chunksLoaded.incrementAndGet();
            }
            synchronized (this) {
                inFlight--;
                pump();
            }
        });
    }

    private void readRange(Slot slot, Chunk.Range range) {
        Chunk c = slot.chunk;
        CheckpointResolver.Listed file = listed.get(c.file());
        MemorySegment dst = slot.segment.asSlice(range.offset() - c.start(), range.length());
        try {
            retry.call("reading " + c.describe(), () -> {
                synchronized (this) {
                    if (closed) {
                        throw new CancellationException("the loader was closed");
                    }
                }
                stats.dataRequests.incrementAndGet();
                try (FSDataInputStream in = RangeReads.open(file.fs(), file.status())) {
                    RangeReads.readInto(in, range.offset(), dst, c.file());
                } catch (UncheckedIOException e) {
                    throw e.getCause();
                }
                stats.dataBytes.addAndGet(range.length());
                return null;
            }, SafetensorsLoader::retryable, stats.retries::incrementAndGet);
        } catch (RetryFailedException e) {
            throw new CompletionException(new ChunkReadException(c, e));
        }
    }

    /** A missing file or a refused access will not get better by asking again. */
    private static boolean retryable(IOException e) {
        return !(e instanceof FileNotFoundException || e instanceof AccessDeniedException
                || e instanceof InterruptedIOException);
    }

    @Override
    public Iterator<LoadedTensor> iterator() {
        return new Iterator<>() {
            private LoadedTensor pending;
            private boolean done;

            @Override
            public boolean hasNext() {
                if (pending == null && !done) {
                    try {
                        pending = SafetensorsLoader.this.next();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                    done = pending == null;
                }
                return pending != null;
            }

            @Override
            public LoadedTensor next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                LoadedTensor t = pending;
                pending = null;
                return t;
            }
        };
    }

    /**
     * Stops reading, waits for requests in flight, and frees every chunk and converted buffer; tensors
     * still held throw {@code IllegalStateException} on access afterwards. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        for (Slot s : slots) {
            CompletableFuture<Void> f = s.future;
            if (f != null) {
                try {
                    f.join();
                } catch (CompletionException | CancellationException ignored) {
                    // already reported to the consumer, or never asked for
                }
            }
        }
        executor.shutdown();
        for (Slot s : slots) {
            s.free();
        }
        for (Arena a : convertedArenas) {
            if (convertedArenas.remove(a)) {
                a.close();
            }
        }
    }

    /** One chunk's buffer and how many of its tensors still hold it. */
    private final class Slot {
        final Chunk chunk;
        final AtomicInteger refs = new AtomicInteger();
        volatile CompletableFuture<Void> future;
        private Arena arena;
        private MemorySegment segment;
        private boolean freed;

        Slot(Chunk chunk) {
            this.chunk = chunk;
        }

        void allocate() {
            Arena a = Arena.ofShared();
            MemorySegment s;
            try {
                // Large chunks are mapped on demand: the read fills them at once, so Arena.allocate's
                // zeroing pass (the largest client CPU cost in the profile) would only delay the GETs.
                if (chunk.byteSize() < HUGE_PAGE_MIN_BYTES) {
                    s = a.allocate(Math.max(1, chunk.byteSize()), 64).asSlice(0, chunk.byteSize());
                } else if (config.hugePages()) {
                    s = HugePages.allocate(a, chunk.byteSize());
                } else {
                    s = HugePages.allocateOnDemand(a, chunk.byteSize());
                }
            } catch (RuntimeException | Error e) {
                a.close();
                throw e;
            }
            synchronized (SafetensorsLoader.this) {
                if (freed) { // closed before the read started
                    a.close();
                    throw new CancellationException("the loader was closed");
                }
                arena = a;
                segment = s;
            }
        }

        void release() {
            if (refs.decrementAndGet() == 0) {
                free();
                synchronized (SafetensorsLoader.this) {
                    pump();
                }
            }
        }

        void free() {
            Arena a;
            synchronized (SafetensorsLoader.this) {
                if (freed) {
                    return;
                }
                freed = true;
                a = arena;
                arena = null;
                if (future != null) {
                    residentBytes -= chunk.byteSize();
                }
            }
            if (a != null) {
                a.close();
            }
        }
    }
}
