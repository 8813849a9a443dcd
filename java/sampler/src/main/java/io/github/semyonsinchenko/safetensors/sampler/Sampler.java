package io.github.semyonsinchenko.safetensors.sampler;

import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Locale;

/**
 * headwater's sampler on the JVM (spec §12): two producer threads (train and val) build batches
 * ahead of the consumer into bounded channels ({@code num_prefetch}; 0 is a rendezvous for train,
 * val keeps at least 1); {@link #nextTrain()} and {@link #nextVal()} block until one is ready.
 *
 * <ul>
 *   <li>Batches are the reference's, bit for bit, for the same database and configuration; close
 *       each one to give its memory back.</li>
 *   <li>{@link #shutdown()} (also {@link #close()}) is idempotent and never hangs: it stops the
 *       producers, wakes blocked consumers with a {@link SamplerShutdownException}, frees batches
 *       nobody took and joins the threads.</li>
 *   <li>A producer failure reaches the consumer as a {@link SamplerException} carrying the cause; a
 *       database file truncated meanwhile is the cause
 *       {@link io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException} naming the file
 *       and its first byte lost.</li>
 *   <li>A split with no seed on this rank fails at once instead of blocking forever.</li>
 * </ul>
 * All threads are daemon threads, so an embedding process (e.g. Python) can always exit.
 */
public final class Sampler implements AutoCloseable {
    private final Database db;
    private final boolean ownsDb;
    private final BatchBuilder builder;
    private final Producer train;
    private final Producer val;
    private volatile boolean stopped;
    private volatile boolean shutDown;

    private Sampler(Database db, boolean ownsDb, SamplerConfig config) {
        this.db = db;
        this.ownsDb = ownsDb;
        this.builder = new BatchBuilder(db, config);
        this.train = new Producer(builder.stream(Split.TRAIN), config.numPrefetch());
        this.val = new Producer(builder.stream(Split.VAL), Math.max(config.numPrefetch(), 1));
        train.start();
        val.start();
    }

    /**
     * Opens the database in {@code dir} (owned by the sampler, closed with it) and starts sampling.
     *
     * @param dir the database folder
     * @param config the sampler's settings
     * @return a running sampler; close it when done
     * @throws IOException if the database cannot be opened or fails its checks
     */
    public static Sampler open(Path dir, SamplerConfig config) throws IOException {
        Database db = Database.open(dir);
        try {
            return new Sampler(db, true, config);
        } catch (RuntimeException | Error e) {
            db.close();
            throw e;
        }
    }

    /**
     * Samples from an open database that the caller keeps owning (close it after the sampler).
     *
     * @param db an open database
     * @param config the sampler's settings
     * @return a running sampler; close it before the database
     */
    public static Sampler of(Database db, SamplerConfig config) {
        return new Sampler(db, false, config);
    }

    /**
     * The next training batch; blocks until one is ready. The caller owns it and closes it.
     *
     * @return the next training batch
     * @throws InterruptedException if the calling thread is interrupted while waiting
     * @throws SamplerShutdownException if the sampler was shut down
     * @throws SamplerException if a producer failed or this rank has no training seed
     */
    public Batch nextTrain() throws InterruptedException {
        return train.next();
    }

    /**
     * The next validation batch (drawn with replacement); blocks until one is ready. The caller owns
     * it and closes it.
     *
     * @return the next validation batch
     * @throws InterruptedException if the calling thread is interrupted while waiting
     * @throws SamplerShutdownException if the sampler was shut down
     * @throws SamplerException if a producer failed or this rank has no validation seed
     */
    public Batch nextVal() throws InterruptedException {
        return val.next();
    }

    /**
     * The database sampled from.
     *
     * @return the database (owned by the sampler when it was made by {@link #open})
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
        return builder.config();
    }

    /**
     * Seeds per task and split on this rank.
     *
     * @return this rank's seeds
     */
    public SeedShards shards() {
        return builder.shards();
    }

    /**
     * {@code [C, 256]} f16 column-name embeddings (a read-only view of the mapping: a read of a page
     * the file lost since is the JDK's {@link InternalError}; {@code db.columnEmbeddings().copyTo}
     * copies with the typed exception instead).
     *
     * @return the column-name embeddings, valid while the database is open
     */
    public MemorySegment columnEmbeddings() {
        return db.columnEmbeddings().segment();
    }

    /**
     * {@code [Vc, 256]} f16 categorical embeddings (a read-only view of the mapping, as
     * {@link #columnEmbeddings()}).
     *
     * @return the categorical embeddings, valid while the database is open
     */
    public MemorySegment categoricalEmbeddings() {
        return db.categoricalEmbeddings().segment();
    }

    /**
     * Batch memory sets created so far; stays constant in steady state when batches are closed.
     *
     * @return the number of batch memory sets allocated
     */
    public int buffersCreated() {
        return builder.buffersCreated();
    }

    /**
     * Stops the producers, wakes blocked consumers ("shut down"), frees batches nobody took, joins
     * the threads and (for {@link #open}) closes the database. Idempotent; never blocks for long:
     * a producer in the middle of a batch finishes it first.
     */
    public void shutdown() {
        synchronized (this) {
            if (shutDown) {
                return;
            }
            shutDown = true;
        }
        stopped = true;
        train.channel.close();
        val.channel.close();
        boolean interrupted = false;
        for (Producer p : new Producer[] {train, val}) {
            if (p.thread == null) {
                continue;
            }
            while (p.thread.isAlive()) {
                try {
                    p.thread.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        // A producer that put a batch after the first close: free it too.
        train.channel.close();
        val.channel.close();
        builder.close();
        if (ownsDb) {
            db.close();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Same as {@link #shutdown()}. */
    @Override
    public void close() {
        shutdown();
    }

    /** One split's producer thread and channel. */
    private final class Producer {
        final BatchBuilder.Stream stream;
        final BatchChannel channel;
        final String name;
        Thread thread;

        Producer(BatchBuilder.Stream stream, int capacity) {
            this.stream = stream;
            this.name = stream.split().label();
            this.channel = new BatchChannel(name, capacity);
        }

        void start() {
            if (!stream.hasSeeds()) {
                channel.producerDone();
                return;
            }
            thread = new Thread(this::run, "sampler-" + name + "-producer");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            try {
                while (!stopped) {
                    Batch b = stream.next();
                    boolean handedOver = false;
                    try {
                        handedOver = channel.put(b);
                    } finally {
                        if (!handedOver) {
                            b.close();
                        }
                    }
                    if (!handedOver) {
                        break;
                    }
                }
            } catch (InterruptedException e) {
                // shutting down
            } catch (InternalError e) {
                // A fault raised after Stream.next returned (at a later safepoint poll): typed here too.
                if (!stopped) {
                    channel.fail(MappedFiles.isMemoryFault(e) ? db.fault(e, "producing a " + name + " batch") : e);
                }
            } catch (Throwable t) {
                if (!stopped) {
                    channel.fail(t);
                }
            } finally {
                channel.producerDone();
            }
        }

        Batch next() throws InterruptedException {
            if (!stream.hasSeeds()) {
                SamplerConfig c = builder.config();
                throw new SamplerException(String.format(Locale.ROOT,
                        "no %s seeds on rank %d of %d in any task (split ratios %s/%s/%s, split_seed %d):"
                                + " %s batches can never be produced", name, c.rank(), c.worldSize(),
                        c.trainRatio(), c.valRatio(), c.testRatio(), c.splitSeed(), name));
            }
            if (shutDown) {
                throw new SamplerShutdownException("the sampler has been shut down (no more " + name + " batches)");
            }
            return channel.take();
        }
    }
}
