package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.io.RetryFailedException;
import io.github.semyonsinchenko.safetensors.io.RetryPolicy;
import io.github.semyonsinchenko.safetensors.kernels.HugePages;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
 * <p>{@link #open} runs the metadata pass and builds the {@link ChunkPlan} of the tensors a
 * {@link TensorSelection} selects (all by default), each sliced as it says, so only the bytes those
 * slices need are read; iteration hands out this rank's tensors (or all, with {@code readAll}) in
 * plan order while the next chunks load in the background on the loader's own threads, within the
 * byte budget, and {@link #tensor(String)} hands out one by name, loading its chunk first if needed.
 * A tensor is handed out only when every byte of its chunk has arrived and its length checked; a
 * request that fails is retried with backoff, and a failure that persists is a
 * {@link ChunkReadException} naming the file, the range and the tensors. One consumer thread
 * iterates and looks up; tensors may be closed from any thread.
 *
 * <pre>{@code
 * // Tensor parallelism: this rank reads only its block of every 2-D weight.
 * TensorParallel tp = TensorParallel.of(worldSize, rank).rowParallel("*.o_proj.weight", "*.down_proj.weight");
 * try (SafetensorsLoader loader = SafetensorsLoader.open(config, tp.selection(), List.of(uri))) {
 *     LoadedTensor q = loader.tensor("model.layers.0.self_attn.q_proj.weight");   // rows of this rank
 *     ...
 * }
 * }</pre>
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
    private final Map<String, int[]> byName;
    private final TensorHandOut handOut;
    private final RetryPolicy retry;

    // Scheduling state, guarded by "this".
    private int nextToSubmit;
    private int consumePos;
    private int inFlight;
    private long residentBytes;
    private long peakResidentBytes;
    private boolean closed;

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
        this.byName = new HashMap<>();
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot(toRead.get(i));
            List<PlannedTensor> ts = slots[i].chunk.tensors();
            for (int k = 0; k < ts.size(); k++) {
                byName.putIfAbsent(ts.get(k).name(), new int[] {i, k});
            }
        }
        this.handOut = new TensorHandOut(config.convertTo());
    }

    /**
     * Resolves {@code paths} (files, directories, globs, {@code *.index.json}), reads the headers and plans every tensor.
     *
     * @param config the knobs
     * @param paths files, directories, globs or index files
     * @return the loader, planned; nothing but headers read yet
     * @throws IOException if listing or a header read fails, or a header breaks a format rule
     */
    public static SafetensorsLoader open(LoaderConfig config, List<String> paths) throws IOException {
        return open(config, TensorSelection.all(), paths);
    }

    /**
     * Resolves {@code paths}, reads the headers and plans the tensors {@code selection} selects,
     * each its slice: only the bytes the slices need are read (plus gaps of at most
     * {@link LoaderConfig#gapBytes()} between them).
     *
     * @param config the knobs
     * @param selection the tensors and their slices
     * @param paths files, directories, globs or index files
     * @return the loader, planned; nothing but headers read yet
     * @throws java.util.NoSuchElementException if a tensor the selection names is in no file
     * @throws io.github.semyonsinchenko.safetensors.io.SliceOutOfBoundsException if a slice does not fit its tensor
     * @throws IOException if listing or a header read fails, or a header breaks a format rule
     */
    public static SafetensorsLoader open(LoaderConfig config, TensorSelection selection, List<String> paths)
            throws IOException {
        LoadStats stats = new LoadStats();
        ExecutorService executor = newExecutor(config.workerThreadsFor(paths));
        try {
            CheckpointResolver resolver = new CheckpointResolver(config.hadoopConf(), config.metadataCache(),
                    config.speculativeHeaderBytes(), stats);
            List<CheckpointResolver.Listed> found = resolver.resolve(paths);
            List<CheckpointFile> files = resolver.headers(found, executor);
            Map<String, CheckpointResolver.Listed> byPath = new HashMap<>();
            for (CheckpointResolver.Listed l : found) {
                byPath.put(l.path(), l);
            }
            ChunkPlan plan = ChunkPlan.of(files, selection, config.chunkBytes(),
                    config.requestBytesFor(byPath.keySet()), config.gapBytes(), config.legacy());
            return new SafetensorsLoader(config, files, plan, byPath, executor, stats);
        } catch (IOException | RuntimeException | Error e) {
            executor.shutdownNow();
            throw e;
        }
    }

    /**
     * {@link #open(LoaderConfig, List)} of the arguments.
     *
     * @param config the knobs
     * @param paths files, directories, globs or index files
     * @return the loader, planned
     * @throws IOException if listing or a header read fails, or a header breaks a format rule
     */
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

    /** {@return the knobs} */
    public LoaderConfig config() {
        return config;
    }

    /** {@return the files of the checkpoint with their headers, in the order they were found} */
    public List<CheckpointFile> files() {
        return files;
    }

    /** {@return the whole plan (every rank's chunks)} */
    public ChunkPlan plan() {
        return plan;
    }

    /** {@return the chunks this loader reads: this rank's, or all of them in all-ranks mode} */
    public List<Chunk> chunksToRead() {
        return toRead;
    }

    /** {@return what the load has cost so far, updated live} */
    public LoadStats stats() {
        return stats;
    }

    /** {@return the chunk bytes held now (loaded or loading, not yet freed)} */
    public synchronized long residentBytes() {
        return residentBytes;
    }

    /** {@return the most chunk bytes held at once so far} */
    public synchronized long peakResidentBytes() {
        return peakResidentBytes;
    }

    /**
     * The next tensor in plan order not handed out yet (by {@link #tensor(String)}), or {@code null}
     * when all are handed out. Blocks until its chunk has arrived.
     *
     * @return the tensor, or null when none is left
     * @throws ChunkReadException when its chunk could not be read; the tensor is not handed out
     */
    public LoadedTensor next() throws IOException {
        Slot slot;
        int k;
        synchronized (this) {
            ensureOpen();
            while (consumePos < slots.length && slots[consumePos].remaining == 0) {
                consumePos++;
            }
            if (consumePos >= slots.length) {
                return null;
            }
            pump();
            slot = slots[consumePos];
            k = slot.claimNext();
        }
        return deliver(slot, k);
    }

    /**
     * Tensor {@code name} (its slice, when one was selected), handed out now whatever the plan order:
     * its chunk is read first if it is not loaded or loading yet (like the chunk iteration waits
     * for, it is admitted over the budget), and the other tensors of that chunk stay for
     * {@link #next()} or later lookups. Each tensor is handed out once.
     *
     * @param name the tensor
     * @return it, or its slice
     * @throws NoSuchElementException if this loader does not read the tensor: no file has it, the
     *     selection left it out, or (in owner mode) another rank's chunk holds it
     * @throws IllegalStateException if it was already handed out
     * @throws ChunkReadException when its chunk could not be read
     */
    public LoadedTensor tensor(String name) throws IOException {
        Slot slot;
        int k;
        synchronized (this) {
            ensureOpen();
            int[] at = byName.get(name);
            if (at == null) {
                throw new NoSuchElementException(String.format(Locale.ROOT, "tensor \"%s\" is not loaded here: %s",
                        name, whereIs(name)));
            }
            slot = slots[at[0]];
            k = at[1];
            if (slot.handed[k]) {
                throw new IllegalStateException("tensor \"" + name + "\" of " + slot.chunk.file()
                        + " was already handed out");
            }
            slot.claim(k);
            if (slot.future == null) {
                submit(slot); // waited for now: admitted like the consumer's chunk
            }
        }
        return deliver(slot, k);
    }

    /** Why a name is not among this loader's tensors. */
    private String whereIs(String name) {
        for (Chunk c : plan.chunks()) {
            for (PlannedTensor t : c.tensors()) {
                if (t.name().equals(name)) {
                    return String.format(Locale.ROOT, "chunk %d (%s) belongs to rank %d of %d, and this loader is"
                            + " rank %d without readAll", c.index(), c.file(), ChunkPlan.owner(c.index(),
                            config.worldSize()), config.worldSize(), config.rank());
                }
            }
        }
        for (CheckpointFile f : files) {
            if (f.header().contains(name)) {
                return "the selection does not select it";
            }
        }
        return "no file of the checkpoint has it";
    }

    /**
     * Every tensor not handed out yet, by name in plan order (the whole load held at once: memory
     * grows past the byte budget, which bounds only what is read ahead).
     *
     * @return the tensors by name
     * @throws ChunkReadException when a chunk could not be read
     */
    public Map<String, LoadedTensor> loadAll() throws IOException {
        Map<String, LoadedTensor> all = new LinkedHashMap<>();
        LoadedTensor t;
        while ((t = next()) != null) {
            all.put(t.name(), t);
        }
        return all;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the loader is closed");
        }
    }

    /** Waits for the slot's chunk and hands out its tensor {@code k}, which the caller claimed. */
    private LoadedTensor deliver(Slot slot, int k) throws IOException {
        try {
            await(slot);
        } catch (IOException | RuntimeException | Error e) {
            synchronized (this) {
                slot.unclaim(k); // not handed out
            }
            throw e;
        }
        PlannedTensor t = slot.chunk.tensors().get(k);
        LoadedTensor out = handOut.handOut(slot.chunk.file(), slot.segment, t, slot::release);
        stats.tensorsHandedOut.incrementAndGet();
        stats.bytesHandedOut.addAndGet(t.byteSize());
        return out;
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

    /** Starts reads while the rules allow; the consumer's chunk is always admitted. Caller holds the lock. */
    private void pump() {
        while (!closed && nextToSubmit < slots.length) {
            if (slots[nextToSubmit].future != null) {
                nextToSubmit++; // submitted out of order by a lookup
                continue;
            }
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
        MemorySegment dst = slot.segment.asSlice(range.bufferOffset(), range.length());
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
        handOut.closeAll();
    }

    /** One chunk's buffer, which of its tensors were handed out, and how many still hold it. */
    private final class Slot {
        final Chunk chunk;
        final AtomicInteger refs = new AtomicInteger();
        /** Claimed for hand-out (guarded by the loader's lock). */
        final boolean[] handed;
        /** Tensors not claimed yet (guarded by the loader's lock). */
        int remaining;
        volatile CompletableFuture<Void> future;
        private Arena arena;
        private MemorySegment segment;
        private boolean freed;

        Slot(Chunk chunk) {
            this.chunk = chunk;
            this.handed = new boolean[chunk.tensors().size()];
            this.remaining = handed.length;
        }

        /** Claims the first tensor not handed out; the caller checked that one remains. */
        int claimNext() {
            for (int k = 0; k < handed.length; k++) {
                if (!handed[k]) {
                    claim(k);
                    return k;
                }
            }
            throw new IllegalStateException("no tensor left in chunk " + chunk.index());
        }

        void claim(int k) {
            handed[k] = true;
            remaining--;
        }

        void unclaim(int k) {
            handed[k] = false;
            remaining++;
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
