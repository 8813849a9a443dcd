package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.RetryPolicy;
import io.github.semyonsinchenko.safetensors.options.Options;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;

/**
 * Every knob of the loader, immutable. Start from {@link #builder()} (defaults) or
 * {@link #fromEnvironment()} (defaults overridden by system properties, then environment
 * variables), then change what you need on the builder.
 *
 * <table>
 *   <caption>Knobs, their system property / environment variable, and defaults</caption>
 *   <tr><th>knob</th><th>property / variable</th><th>default</th></tr>
 *   <tr><td>chunkBytes</td><td>safetensors.loader.chunkBytes / SAFETENSORS_LOADER_CHUNK_BYTES</td><td>2,000,000,000</td></tr>
 *   <tr><td>requestBytes</td><td>safetensors.loader.requestBytes / SAFETENSORS_LOADER_REQUEST_BYTES</td><td>0: 64 MiB on object stores, else one request per chunk</td></tr>
 *   <tr><td>maxConcurrentChunks</td><td>safetensors.loader.maxConcurrentChunks / SAFETENSORS_LOADER_MAX_CONCURRENT_CHUNKS</td><td>4</td></tr>
 *   <tr><td>workerThreads</td><td>safetensors.loader.workerThreads / SAFETENSORS_LOADER_WORKER_THREADS</td><td>8</td></tr>
 *   <tr><td>prefetchDepth</td><td>safetensors.loader.prefetchDepth / SAFETENSORS_LOADER_PREFETCH_DEPTH</td><td>2</td></tr>
 *   <tr><td>byteBudget</td><td>safetensors.loader.byteBudget / SAFETENSORS_LOADER_BYTE_BUDGET</td><td>4,000,000,000</td></tr>
 *   <tr><td>legacy</td><td>safetensors.loader.legacy / SAFETENSORS_LOADER_LEGACY</td><td>false</td></tr>
 *   <tr><td>hugePages</td><td>safetensors.loader.hugePages / SAFETENSORS_LOADER_HUGE_PAGES</td><td>false</td></tr>
 *   <tr><td>gapBytes</td><td>safetensors.loader.gapBytes / SAFETENSORS_LOADER_GAP_BYTES</td><td>65,536</td></tr>
 * </table>
 *
 * @param chunkBytes largest chunk holding more than one tensor; a chunk over {@code requestBytes}
 *     (one Hadoop range holds at most {@code Integer.MAX_VALUE} bytes) is read in several requests
 * @param requestBytes largest single request; smaller than a chunk splits it into concurrent
 *     sub-range requests (for stores where one stream caps throughput); 0 (the default) picks
 *     {@link #OBJECT_STORE_REQUEST_BYTES} when the checkpoint is on an object store
 *     ({@link #OBJECT_STORE_SCHEMES}) and one request per chunk elsewhere (HDFS, local)
 * @param maxConcurrentChunks chunks being read at once
 * @param workerThreads threads of the loader's own executor (requests in flight at once); 0 (the
 *     default) picks {@link #OBJECT_STORE_WORKER_THREADS} when the checkpoint is on an object store,
 *     where each request waits mostly on the store's latency, and {@link #DEFAULT_WORKER_THREADS}
 *     elsewhere
 * @param prefetchDepth chunks read ahead of the one being handed out
 * @param byteBudget chunk bytes held in memory (loaded or loading) beyond which no prefetch starts;
 *     the chunk the consumer waits for is always admitted, so memory stays within budget + one chunk
 * @param legacy one request per tensor (the pre-chunking path, for rollback and comparison)
 * @param worldSize number of cooperating processes
 * @param rank this process, in [0, worldSize)
 * @param readAll read every chunk (all-ranks mode) instead of only this rank's
 * @param convertTo if set, floating-point tensors are handed out converted to this dtype
 * @param maxAttempts attempts per request before a failure is final
 * @param retryBackoff first retry delay; doubles per attempt up to {@code maxRetryBackoff}
 * @param maxRetryBackoff longest retry delay
 * @param speculativeHeaderBytes bytes of the first header read
 * @param hadoopConf the Hadoop configuration file systems are created with
 * @param metadataCache where parsed headers are kept between loads
 * @param hugePages put chunks of 8 MiB and more into transparent huge pages (fewer TLB misses when
 *     tensors are read at random afterwards); off by default because the first touch of a huge page
 *     can stall on the kernel's compaction: measured 0.1 to 1.4 s of CPU per 512 MiB (against
 *     0.25 s for ordinary memory) with THP defrag set to "madvise", which made the whole load slower
 * @param gapBytes with a selection or slices ({@link TensorSelection}), the largest run of unneeded
 *     bytes one request reads through to serve the needed bytes on both sides instead of issuing a
 *     second request (0: never read an unneeded byte)
 */
public record LoaderConfig(long chunkBytes, int requestBytes, int maxConcurrentChunks, int workerThreads,
                           int prefetchDepth, long byteBudget, boolean legacy, int worldSize, int rank,
                           boolean readAll, Dtype convertTo, int maxAttempts, Duration retryBackoff,
                           Duration maxRetryBackoff, int speculativeHeaderBytes, Configuration hadoopConf,
                           MetadataCache metadataCache, boolean hugePages, long gapBytes) {
    public static final String PROPERTY_PREFIX = "safetensors.loader.";
    /**
     * The default {@code gapBytes}, 64 KiB: reading a gap that small costs less than another request
     * even on HDFS, while the bytes a rank reads stay close to what it needs (a larger gap merges the
     * blocks of small tensors that ranks split, so each rank reads most of them; see
     * bench/results/loader-tp.md). A tensor-parallel block along dimension 0 is one run, and the gaps
     * between ranks' blocks of large weights are far larger than this.
     */
    public static final long DEFAULT_GAP_BYTES = 64 << 10;
    public static final String ENV_PREFIX = "SAFETENSORS_LOADER_";
    /**
     * Requests on object stores, where one stream caps throughput (437 MB/s from s3proxy, far less
     * from real stores): a 512 MiB chunk becomes 8 concurrent requests.
     */
    public static final int OBJECT_STORE_REQUEST_BYTES = 64 << 20;
    /** Worker threads on an object store when {@link #workerThreads} is 0: requests are latency-bound. */
    public static final int OBJECT_STORE_WORKER_THREADS = 32;
    /** Worker threads elsewhere (HDFS, local) when {@link #workerThreads} is 0. */
    public static final int DEFAULT_WORKER_THREADS = 8;
    /** File system schemes of object stores (S3, GCS, Azure, OSS, COS, OBS). */
    public static final Set<String> OBJECT_STORE_SCHEMES = Set.of("s3a", "s3", "s3n", "gs", "abfs", "abfss",
            "wasb", "wasbs", "oss", "cosn", "obs");

    /** Checks every value; fills in the Hadoop configuration and the metadata cache when null. */
    public LoaderConfig {
        positive("chunkBytes", chunkBytes);
        if (requestBytes < 0) {
            throw new IllegalArgumentException("requestBytes must be >= 0 (0: by file system), got " + requestBytes);
        }
        positive("maxConcurrentChunks", maxConcurrentChunks);
        if (workerThreads < 0) {
            throw new IllegalArgumentException("workerThreads must be >= 0 (0: by file system), got " + workerThreads);
        }
        if (prefetchDepth < 0) {
            throw new IllegalArgumentException("prefetchDepth must be >= 0, got " + prefetchDepth);
        }
        positive("byteBudget", byteBudget);
        positive("maxAttempts", maxAttempts);
        retryPolicy(maxAttempts, retryBackoff, maxRetryBackoff); // refuses negative or missing waits now, not at open
        positive("speculativeHeaderBytes", speculativeHeaderBytes);
        if (gapBytes < 0) {
            throw new IllegalArgumentException("gapBytes must be >= 0, got " + gapBytes);
        }
        ChunkPlan.checkRank(rank, worldSize);
        if (hadoopConf == null) {
            hadoopConf = new Configuration();
        }
        if (metadataCache == null) {
            metadataCache = MetadataCache.SHARED;
        }
    }

    /**
     * {@return the retry policy of a ranged read: {@link #maxAttempts} in all, waiting
     * {@link #retryBackoff} after the first failure, doubling up to {@link #maxRetryBackoff} (never
     * below the first wait)}
     */
    public RetryPolicy retryPolicy() {
        return retryPolicy(maxAttempts, retryBackoff, maxRetryBackoff);
    }

    private static RetryPolicy retryPolicy(int maxAttempts, Duration backoff, Duration maxBackoff) {
        if (backoff == null || maxBackoff == null) {
            throw new IllegalArgumentException("retry backoffs must be given, got " + backoff + " and " + maxBackoff);
        }
        return new RetryPolicy(maxAttempts, backoff, maxBackoff.compareTo(backoff) >= 0 ? maxBackoff : backoff, 0);
    }

    /**
     * The request size for a checkpoint made of {@code paths}: {@link #requestBytes} when set, else
     * {@link #OBJECT_STORE_REQUEST_BYTES} if any path is on an object store, else one request per
     * chunk ({@code Integer.MAX_VALUE}, the most one Hadoop range holds).
     *
     * @param paths the checkpoint's files
     * @return the largest request, in bytes
     */
    public int requestBytesFor(Collection<String> paths) {
        if (requestBytes > 0) {
            return requestBytes;
        }
        return onObjectStore(paths) ? OBJECT_STORE_REQUEST_BYTES : Integer.MAX_VALUE;
    }

    /**
     * The worker threads for a checkpoint named by {@code paths}: {@link #workerThreads} when set,
     * else {@link #OBJECT_STORE_WORKER_THREADS} if any path is on an object store, else
     * {@link #DEFAULT_WORKER_THREADS}.
     *
     * @param paths the checkpoint's files, directories or globs
     * @return the size of the loader's executor
     */
    public int workerThreadsFor(Collection<String> paths) {
        if (workerThreads > 0) {
            return workerThreads;
        }
        return onObjectStore(paths) ? OBJECT_STORE_WORKER_THREADS : DEFAULT_WORKER_THREADS;
    }

    private static boolean onObjectStore(Collection<String> paths) {
        for (String p : paths) {
            String scheme = new org.apache.hadoop.fs.Path(p).toUri().getScheme();
            if (scheme != null && OBJECT_STORE_SCHEMES.contains(scheme.toLowerCase(Locale.ROOT))) {
                return true;
            }
        }
        return false;
    }

    private static void positive(String name, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }

    /** {@return a builder holding the defaults} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * {@return a builder of the defaults overridden by {@code safetensors.loader.*} system properties,
     * then {@code SAFETENSORS_LOADER_*} variables}
     *
     * @throws io.github.semyonsinchenko.safetensors.options.OptionException (an
     *     IllegalArgumentException) for a setting no knob has, naming the closest knob, or a value that
     *     is not allowed
     */
    public static Builder fromEnvironment() {
        Map<String, String> properties = new HashMap<>();
        for (String name : System.getProperties().stringPropertyNames()) {
            properties.put(name, System.getProperty(name));
        }
        return fromEnvironment(properties, System.getenv());
    }

    /** The knobs settable by property or variable. */
    static final Set<String> KNOBS = Set.of("chunkBytes", "requestBytes", "maxConcurrentChunks", "workerThreads",
            "prefetchDepth", "byteBudget", "legacy", "hugePages", "gapBytes");

    static Builder fromEnvironment(Map<String, String> properties, Map<String, String> env) {
        // Knob names: chunkBytes from safetensors.loader.chunkBytes or SAFETENSORS_LOADER_CHUNK_BYTES;
        // a property wins over a variable.
        Map<String, String> given = new HashMap<>();
        env.forEach((name, value) -> {
            if (name.startsWith(ENV_PREFIX)) {
                given.put(camelCase(name.substring(ENV_PREFIX.length())), value);
            }
        });
        properties.forEach((name, value) -> {
            if (name.startsWith(PROPERTY_PREFIX)) {
                given.put(name.substring(PROPERTY_PREFIX.length()), value);
            }
        });
        Options o = Options.of("loader (safetensors.loader.* property or SAFETENSORS_LOADER_* variable)", given)
                .requireKnown(KNOBS, name -> false);
        Builder b = new Builder();
        return b.chunkBytes(o.longValue("chunkBytes", b.chunkBytes, 1, Long.MAX_VALUE, "bytes"))
                .requestBytes(o.intValue("requestBytes", b.requestBytes, 0, Integer.MAX_VALUE, "bytes"))
                .maxConcurrentChunks(o.intValue("maxConcurrentChunks", b.maxConcurrentChunks, 1, Integer.MAX_VALUE,
                        "chunks"))
                .workerThreads(o.intValue("workerThreads", b.workerThreads, 0, Integer.MAX_VALUE, "threads"))
                .prefetchDepth(o.intValue("prefetchDepth", b.prefetchDepth, 0, Integer.MAX_VALUE, "chunks"))
                .byteBudget(o.longValue("byteBudget", b.byteBudget, 1, Long.MAX_VALUE, "bytes"))
                .legacy(o.bool("legacy", b.legacy))
                .hugePages(o.bool("hugePages", b.hugePages))
                .gapBytes(o.longValue("gapBytes", b.gapBytes, 0, Long.MAX_VALUE, "bytes"));
    }

    /** {@code CHUNK_BYTES} as {@code chunkBytes}. */
    private static String camelCase(String upperSnake) {
        StringBuilder out = new StringBuilder();
        boolean up = false;
        for (char c : upperSnake.toCharArray()) {
            if (c == '_') {
                up = out.length() > 0;
            } else {
                out.append(up ? Character.toUpperCase(c) : Character.toLowerCase(c));
                up = false;
            }
        }
        return out.toString();
    }

    /** A mutable builder; {@link #build()} checks every value. */
    public static final class Builder {
        /** A builder holding the defaults; {@link LoaderConfig#builder()} is the same. */
        public Builder() {
        }

        private long chunkBytes = 2_000_000_000L;
        private int requestBytes;
        private int maxConcurrentChunks = 4;
        private int workerThreads = 0;
        private int prefetchDepth = 2;
        private long byteBudget = 4_000_000_000L;
        private boolean legacy;
        private int worldSize = 1;
        private int rank;
        private boolean readAll;
        private Dtype convertTo;
        private int maxAttempts = 4;
        private Duration retryBackoff = Duration.ofMillis(100);
        private Duration maxRetryBackoff = Duration.ofSeconds(2);
        private int speculativeHeaderBytes = 256 * 1024;
        private Configuration hadoopConf;
        private MetadataCache metadataCache;
        private boolean hugePages;
        private long gapBytes = DEFAULT_GAP_BYTES;

        /**
         * Sets {@code chunkBytes}: the largest chunk holding more than one tensor, in bytes read.
         *
         * @param v the value
         * @return this builder
         */
        public Builder chunkBytes(long v) {
            chunkBytes = v;
            return this;
        }

        /**
         * Sets {@code requestBytes}: the largest single request in bytes; 0 picks by file system.
         *
         * @param v the value
         * @return this builder
         */
        public Builder requestBytes(int v) {
            requestBytes = v;
            return this;
        }

        /**
         * Sets {@code maxConcurrentChunks}: how many chunks are read at once.
         *
         * @param v the value
         * @return this builder
         */
        public Builder maxConcurrentChunks(int v) {
            maxConcurrentChunks = v;
            return this;
        }

        /**
         * Sets {@code workerThreads}: the threads of the loader's own executor; 0 picks by file system.
         *
         * @param v the value
         * @return this builder
         */
        public Builder workerThreads(int v) {
            workerThreads = v;
            return this;
        }

        /**
         * Sets {@code prefetchDepth}: how many chunks are read ahead of the one handed out.
         *
         * @param v the value
         * @return this builder
         */
        public Builder prefetchDepth(int v) {
            prefetchDepth = v;
            return this;
        }

        /**
         * Sets {@code byteBudget}: chunk bytes held beyond which no prefetch starts.
         *
         * @param v the value
         * @return this builder
         */
        public Builder byteBudget(long v) {
            byteBudget = v;
            return this;
        }

        /**
         * Sets {@code legacy}: one request per tensor (the pre-chunking path).
         *
         * @param v the value
         * @return this builder
         */
        public Builder legacy(boolean v) {
            legacy = v;
            return this;
        }

        /**
         * This process is {@code rank} of {@code worldSize}; it reads only its own chunks unless
         * {@link #readAll}.
         *
         * @param rank this process, in {@code [0, worldSize)}
         * @param worldSize the number of cooperating processes
         * @return this builder
         */
        public Builder rank(int rank, int worldSize) {
            this.rank = rank;
            this.worldSize = worldSize;
            return this;
        }

        /**
         * Sets {@code readAll}: read every chunk instead of only this rank's.
         *
         * @param v the value
         * @return this builder
         */
        public Builder readAll(boolean v) {
            readAll = v;
            return this;
        }

        /**
         * Sets {@code convertTo}: the dtype floating-point tensors are handed out as, or null.
         *
         * @param v the value
         * @return this builder
         */
        public Builder convertTo(Dtype v) {
            convertTo = v;
            return this;
        }

        /**
         * Sets the retry policy.
         *
         * @param maxAttempts attempts per request before a failure is final
         * @param backoff the first retry delay; it doubles per attempt
         * @param maxBackoff the longest retry delay
         * @return this builder
         */
        public Builder retries(int maxAttempts, Duration backoff, Duration maxBackoff) {
            this.maxAttempts = maxAttempts;
            this.retryBackoff = backoff;
            this.maxRetryBackoff = maxBackoff;
            return this;
        }

        /**
         * Sets {@code speculativeHeaderBytes}: the bytes of the first header read.
         *
         * @param v the value
         * @return this builder
         */
        public Builder speculativeHeaderBytes(int v) {
            speculativeHeaderBytes = v;
            return this;
        }

        /**
         * Sets {@code hadoopConf}: the Hadoop configuration file systems are created with.
         *
         * @param v the value
         * @return this builder
         */
        public Builder hadoopConf(Configuration v) {
            hadoopConf = v;
            return this;
        }

        /**
         * Sets {@code metadataCache}: where parsed headers are kept between loads.
         *
         * @param v the value
         * @return this builder
         */
        public Builder metadataCache(MetadataCache v) {
            metadataCache = v;
            return this;
        }

        /**
         * Sets {@code hugePages}: chunks of 8 MiB and more go into transparent huge pages.
         *
         * @param v the value
         * @return this builder
         */
        public Builder hugePages(boolean v) {
            hugePages = v;
            return this;
        }

        /**
         * The largest gap of unneeded bytes a request reads through between needed ones (see the
         * record's {@code gapBytes}); 0 reads no unneeded byte.
         *
         * @param v bytes, at least 0
         * @return this builder
         */
        public Builder gapBytes(long v) {
            gapBytes = v;
            return this;
        }

        /** {@return the configuration, every value checked} */
        public LoaderConfig build() {
            return new LoaderConfig(chunkBytes, requestBytes, maxConcurrentChunks, workerThreads, prefetchDepth,
                    byteBudget, legacy, worldSize, rank, readAll, convertTo, maxAttempts, retryBackoff,
                    maxRetryBackoff, speculativeHeaderBytes, hadoopConf, metadataCache, hugePages, gapBytes);
        }
    }
}
