package io.github.semyonsinchenko.safetensors.sampler;

import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.U32;
import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.U8;

import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.ExecutionException;

/**
 * Builds batches synchronously (spec §9-11): {@link #stream(Split)} gives a deterministic stream
 * of batches for one split, the same as the reference's producer for that split. The {@code B}
 * sequences of a batch are built on a bounded pool ({@link SamplerConfig#threads()} workers, the
 * calling thread included); each sequence has its own RNG seed drawn before any is built, so the
 * result does not depend on scheduling. {@link Sampler} runs two streams on producer threads.
 */
public final class BatchBuilder implements AutoCloseable {
    private static final AtomicInteger POOL_IDS = new AtomicInteger();

    private final Database db;
    private final SamplerConfig config;
    private final SamplingPlan plan;
    private final SeedShards shards;
    private final BatchPool pool;
    private final ExecutorService executor;
    private final ConcurrentLinkedQueue<SequenceWorker> workers = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    /**
     * Assigns the seeds and starts the worker threads ({@code threads - 1} of them). Does not take
     * ownership of {@code db}: close it after this builder.
     *
     * @param db an open database
     * @param config the sampler's settings
     * @throws io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException if a database file
     *     was truncated while its seeds were read
     */
    public BatchBuilder(Database db, SamplerConfig config) {
        this.db = db;
        this.config = config;
        try {
            this.plan = new SamplingPlan(db, config);
            this.shards = new SeedShards(db, config); // reads every task's seeds
        } catch (InternalError e) {
            throw db.fault(e, "assigning the seeds to splits");
        }
        this.pool = new BatchPool(config.batchSize(), config.sequenceLength(), config.maxRowsPerSeq(),
                db.textEmbeddings().rows(), config.numPrefetch() * 2 + 4);
        if (config.threads() > 1) {
            int id = POOL_IDS.incrementAndGet();
            AtomicInteger n = new AtomicInteger();
            ThreadFactory factory = r -> {
                Thread t = new Thread(r, "sampler-" + id + "-worker-" + n.incrementAndGet());
                t.setDaemon(true); // an embedding process (e.g. Python) must be able to exit
                return t;
            };
            this.executor = Executors.newFixedThreadPool(config.threads() - 1, factory);
        } else {
            this.executor = null;
        }
    }

    /**
     * The database sampled from.
     *
     * @return the database
     */
    public Database database() {
        return db;
    }

    /**
     * The settings sampled with.
     *
     * @return the settings
     */
    public SamplerConfig config() {
        return config;
    }

    /**
     * Seeds per task and split on this rank.
     *
     * @return this rank's seeds
     */
    public SeedShards shards() {
        return shards;
    }

    /**
     * Batch memory sets created so far; constant in steady state when batches are closed.
     *
     * @return the number of batch memory sets allocated
     */
    public int buffersCreated() {
        return pool.created();
    }

    /**
     * A stream of batches of {@code split} (train or val), seeded as the reference's producer:
     * {@code seed + rank * 1000 + (0 for train, 1 for val)}.
     *
     * @param split train or val
     * @return a new stream; each call starts from the same seed
     * @throws IllegalArgumentException for the test split, which is never sampled
     */
    public Stream stream(Split split) {
        if (split == Split.TEST) {
            throw new IllegalArgumentException("the test split is assigned but never sampled (as in the reference)");
        }
        long offset = split == Split.TRAIN ? 0 : 1;
        return new Stream(split, new SmallRng(config.seed() + (long) config.rank() * 1000 + offset));
    }

    /** Consecutive batches of one split; not thread-safe (one producer per stream). */
    public final class Stream {
        private final Split split;
        private final SmallRng rng;
        private final int[] tasksWithSeeds;
        private final int[] seedIdx;
        private final long[] seqSeeds;
        private int[] textLocal = new int[0];
        private int[] textStamp = new int[0];
        private int textGen;
        private final String building;

        private Stream(Split split, SmallRng rng) {
            this.split = split;
            this.building = "building a " + split.label() + " batch";
            this.rng = rng;
            int n = 0;
            int[] tmp = new int[shards.numTasks()];
            for (int t = 0; t < shards.numTasks(); t++) {
                if (shards.shard(split, t).length > 0) {
                    tmp[n++] = t;
                }
            }
            this.tasksWithSeeds = java.util.Arrays.copyOf(tmp, n);
            this.seedIdx = new int[config.batchSize()];
            this.seqSeeds = new long[config.batchSize()];
        }

        /**
         * The split this stream draws from.
         *
         * @return train or val
         */
        public Split split() {
            return split;
        }

        /**
         * Whether this rank has seeds of this split in some task (otherwise {@link #next()} returns null).
         *
         * @return true if batches can be drawn
         */
        public boolean hasSeeds() {
            return tasksWithSeeds.length > 0;
        }

        /**
         * Builds the next batch; the caller owns it and closes it.
         *
         * @return the batch, or null when this rank has no seed of this split (nothing is drawn then)
         * @throws io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException if a database
         *     file was truncated while the batch was built
         */
        public Batch next() {
            if (closed) {
                throw new IllegalStateException("the batch builder is closed");
            }
            if (tasksWithSeeds.length == 0) {
                return null;
            }
            int task = tasksWithSeeds[(int) rng.below(tasksWithSeeds.length)];
            int[] shard = shards.shard(split, task);
            int b = config.batchSize();
            for (int i = 0; i < b; i++) {
                seedIdx[i] = shard[(int) rng.below(shard.length)];
            }
            for (int i = 0; i < b; i++) {
                seqSeeds[i] = rng.nextLong();
            }
            BatchBuffers buf = pool.acquire();
            boolean success = false;
            try {
                try {
                    buildSequences(buf, task, seedIdx, seqSeeds);
                } catch (InternalError e) { // on any thread: buildSequences rethrows the helpers' failures
                    throw db.fault(e, building);
                }
                int u = collateTexts(buf);
                db.checkNotTruncated(building);
                buf.targetStype.set(U8, 0, (byte) plan.targetStype[task].code());
                buf.taskIdx.set(U32, 0, task);
                buf.catEmbStart.set(U32, 0, plan.catEmbStart[task]);
                buf.catEmbCount.set(U32, 0, plan.catEmbCount[task]);
                Batch batch = new Batch(pool, buf, split, task, plan.targetStype[task], u,
                        config.emitCategoricalRange());
                success = true;
                return batch;
            } finally {
                if (!success) {
                    pool.release(buf);
                }
            }
        }

        /**
         * Text dedup (spec §11): non-padding, non-null Text cells get batch-local ids in
         * first-occurrence order (sequence, then position); their rows are gathered from
         * {@code text_embeddings.bin} with the kernels' gather.
         */
        private int collateTexts(BatchBuffers buf) {
            long vt = db.textEmbeddings().rows();
            if (textStamp.length < vt) {
                textStamp = new int[(int) vt];
                textLocal = new int[(int) vt];
                textGen = 0;
            }
            if (++textGen == 0) {
                java.util.Arrays.fill(textStamp, 0);
                textGen = 1;
            }
            int u = 0;
            int[] uniq = buf.uniqueTexts;
            MemorySegment types = buf.semanticTypes;
            MemorySegment nulls = buf.isNull;
            MemorySegment ids = buf.textIds;
            byte text = (byte) SemanticType.TEXT.code();
            for (int b = 0; b < buf.batch; b++) {
                long base = (long) b * buf.seqLen;
                int cells = buf.cells[b];
                for (int p = 0; p < cells; p++) {
                    long i = base + p;
                    if (types.get(U8, i) != text) {
                        continue;
                    }
                    if (nulls.get(U8, i) != 0) {
                        ids.set(U32, i * 4, 0); // a null target on a Text cell (Q2 fallback): no text
                        continue;
                    }
                    int global = ids.get(U32, i * 4);
                    int local;
                    if (textStamp[global] == textGen) {
                        local = textLocal[global];
                    } else {
                        local = u++;
                        textStamp[global] = textGen;
                        textLocal[global] = local;
                        if (local == uniq.length) {
                            uniq = java.util.Arrays.copyOf(uniq, uniq.length * 2);
                            buf.uniqueTexts = uniq;
                        }
                        uniq[local] = global;
                    }
                    ids.set(U32, i * 4, local);
                }
            }
            MemorySegment dst = buf.ensureTextRows(u);
            if (u > 0) {
                Kernels.gather(db.textEmbeddings().segment(), DatabaseLayout.EMBEDDING_ROW_BYTES, uniq, 0, u, dst);
            }
            return u;
        }
    }

    private void buildSequences(BatchBuffers buf, int task, int[] seedIdx, long[] seqSeeds) {
        int b = config.batchSize();
        AtomicInteger next = new AtomicInteger();
        Runnable work = () -> {
            SequenceWorker w = workers.poll();
            if (w == null) {
                w = new SequenceWorker(plan);
            }
            try {
                int i;
                while ((i = next.getAndIncrement()) < b) {
                    w.build(buf, i, task, seedIdx[i], seqSeeds[i]);
                }
                // A fault in compiled code is raised at a later safepoint poll: here, not after the task ended.
                MappedFiles.raisePendingFault();
            } finally {
                workers.add(w);
            }
        };
        int helpers = executor == null ? 0 : Math.min(config.threads() - 1, b - 1);
        if (helpers == 0) {
            work.run();
            return;
        }
        List<Future<?>> futures = new ArrayList<>(helpers);
        for (int h = 0; h < helpers; h++) {
            futures.add(executor.submit(work));
        }
        Throwable failure = null;
        try {
            work.run();
        } catch (RuntimeException | Error e) {
            failure = e;
            next.set(b); // let the helpers stop early
        }
        boolean interrupted = false;
        for (Future<?> f : futures) {
            while (true) {
                try {
                    f.get();
                    break;
                } catch (ExecutionException e) {
                    if (failure == null) {
                        failure = e.getCause();
                    }
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // the buffers are in use until every helper is done
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failure instanceof RuntimeException re) {
            throw re;
        }
        if (failure instanceof Error err) {
            throw err;
        }
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
    }

    /** Stops the worker threads and frees idle batch memory. Batches still open stay valid until closed. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (executor != null) {
            executor.shutdownNow();
        }
        pool.close();
    }
}
