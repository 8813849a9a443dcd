package io.github.semyonsinchenko.safetensors.loader;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

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

    // The façade: opening and handing out. ChunkScheduler decides when each chunk's read starts,
    // ChunkReader fills ChunkBuffers (with retries), TensorHandOut turns arrived bytes into tensors.
    private final LoaderConfig config;
    private final List<CheckpointFile> files;
    private final ChunkPlan plan;
    private final List<Chunk> toRead;
    private final ExecutorService executor;
    private final LoadStats stats;
    private final ChunkScheduler scheduler;
    /** Each tensor's chunk (its position in {@code toRead}) and its position in that chunk. */
    private final Map<String, int[]> byName;
    private final TensorHandOut handOut;

    private SafetensorsLoader(LoaderConfig config, List<CheckpointFile> files, ChunkPlan plan,
                              Map<String, CheckpointResolver.Listed> listed, ExecutorService executor,
                              LoadStats stats) {
        this.config = config;
        this.files = List.copyOf(files);
        this.plan = plan;
        this.toRead = config.readAll() ? plan.chunks() : plan.owned(config.rank(), config.worldSize());
        this.executor = executor;
        this.stats = stats;
        this.scheduler = new ChunkScheduler(config, toRead,
                new ChunkReader(executor, listed, config.retryPolicy(), stats), stats);
        this.byName = new HashMap<>();
        for (int i = 0; i < toRead.size(); i++) {
            List<PlannedTensor> ts = toRead.get(i).tensors();
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
    public long residentBytes() {
        return scheduler.residentBytes();
    }

    /** {@return the most chunk bytes held at once so far} */
    public long peakResidentBytes() {
        return scheduler.peakResidentBytes();
    }

    /**
     * The next tensor in plan order not handed out yet (by {@link #tensor(String)}), or {@code null}
     * when all are handed out. Blocks until its chunk has arrived.
     *
     * @return the tensor, or null when none is left
     * @throws ChunkReadException when its chunk could not be read; the tensor is not handed out
     */
    public LoadedTensor next() throws IOException {
        ChunkScheduler.Claim claim = scheduler.claimNext();
        return claim == null ? null : deliver(claim);
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
        scheduler.ensureOpen();
        int[] at = byName.get(name);
        if (at == null) {
            throw new NoSuchElementException(String.format(Locale.ROOT, "tensor \"%s\" is not loaded here: %s",
                    name, whereIs(name)));
        }
        return deliver(scheduler.claim(at[0], at[1], name));
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

    /** Waits for the claimed tensor's chunk and hands the tensor out. */
    private LoadedTensor deliver(ChunkScheduler.Claim claim) throws IOException {
        ChunkBuffer buffer = claim.buffer();
        try {
            buffer.await();
        } catch (IOException | RuntimeException | Error e) {
            scheduler.unclaim(claim); // not handed out
            throw e;
        }
        PlannedTensor t = buffer.chunk.tensors().get(claim.index());
        LoadedTensor out = handOut.handOut(buffer.chunk.file(), buffer.segment(), t, buffer::release);
        stats.tensorsHandedOut.incrementAndGet();
        stats.bytesHandedOut.addAndGet(t.byteSize());
        return out;
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
        if (!scheduler.close()) {
            return;
        }
        scheduler.awaitReads();
        executor.shutdown();
        scheduler.freeAll();
        handOut.closeAll();
    }
}
