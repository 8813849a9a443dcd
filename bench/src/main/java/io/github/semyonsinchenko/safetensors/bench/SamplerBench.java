package io.github.semyonsinchenko.safetensors.bench;

import io.github.semyonsinchenko.safetensors.sampler.Batch;
import io.github.semyonsinchenko.safetensors.sampler.Sampler;
import io.github.semyonsinchenko.safetensors.sampler.SamplerConfig;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * One measurement of our sampler, in a process of its own so that its peak RSS is its own: the
 * counterpart of the headwater driver that {@code bench/python/sampler_bench.py} runs the same way
 * (see {@code bench/README.md}). Opens a {@link Sampler} with the reference's defaults except B, S
 * and threads (the open time includes the database checks, the seed splits and the derived
 * indexes), pulls {@code warmup} training batches, then times at least {@code min-batches} more and
 * at least {@code min-seconds}, closing each batch. Prints {@code key=value} lines: {@code open_s},
 * {@code batches}, {@code seconds}, {@code cpu_seconds} (the whole process: every thread, JIT and GC
 * included), {@code samples_per_s}, {@code samples_per_cpu_s}, {@code peak_rss_kb} (VmHWM) and
 * {@code alloc_bytes_per_batch} (heap, all threads).
 *
 * <p>Usage: {@code SamplerBench <db> <batch> <seq> <threads> <min-batches> <warmup> <min-seconds>}, or
 * {@code SamplerBench digest <db> <batch> <seq> <count>}: the first {@code count} training batches as
 * lines {@code batch <i> task_idx <t> U <u>} then {@code <tensor> <FNV-1a-64 hex>} for the sixteen
 * tensors of headwater's dict, the form the headwater driver prints, so the benchmark can check that
 * both samplers produce the same batches from the database it times.
 */
public final class SamplerBench {
    private SamplerBench() {}

    private static final String[] DIGESTED = {Batch.SEMANTIC_TYPES, Batch.COLUMN_IDS, Batch.SEQ_ROW_IDS,
        Batch.NUMERIC_VALUES, Batch.TIMESTAMP_VALUES, Batch.BOOL_VALUES, Batch.CATEGORICAL_EMBED_IDS,
        Batch.TEXT_EMBED_IDS, Batch.IS_NULL, Batch.IS_TARGET, Batch.IS_PADDING, Batch.FK_ADJ, Batch.COL_PERM,
        Batch.OUT_PERM, Batch.IN_PERM, Batch.TEXT_BATCH_EMBEDDINGS};

    public static void main(String[] args) throws Exception {
        if (args.length == 5 && args[0].equals("digest")) {
            digest(Path.of(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            return;
        }
        if (args.length != 7) {
            System.err.println("usage: SamplerBench <db> <batch> <seq> <threads> <min-batches> <warmup> <min-seconds>");
            System.exit(2);
        }
        Path db = Path.of(args[0]);
        int batch = Integer.parseInt(args[1]);
        int seq = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[3]);
        int minBatches = Integer.parseInt(args[4]);
        int warmup = Integer.parseInt(args[5]);
        double minSeconds = Double.parseDouble(args[6]);
        SamplerConfig config = SamplerConfig.builder().batchSize(batch).sequenceLength(seq).threads(threads).build();
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long t0 = System.nanoTime();
        try (Sampler sampler = Sampler.open(db, config)) {
            double openSeconds = (System.nanoTime() - t0) / 1e9;
            for (int i = 0; i < warmup; i++) {
                sampler.nextTrain().close();
            }
            long alloc0 = mx.getTotalThreadAllocatedBytes();
            long cpu0 = os.getProcessCpuTime();
            long start = System.nanoTime();
            int n = 0;
            while (n < minBatches || (System.nanoTime() - start) / 1e9 < minSeconds) {
                try (Batch b = sampler.nextTrain()) {
                    n++;
                }
            }
            double wall = (System.nanoTime() - start) / 1e9;
            double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
            long alloc = mx.getTotalThreadAllocatedBytes() - alloc0;
            double samples = (double) n * batch;
            System.out.printf(Locale.ROOT, "open_s=%.3f%nbatches=%d%nseconds=%.3f%ncpu_seconds=%.3f%n"
                            + "samples_per_s=%.1f%nsamples_per_cpu_s=%.1f%nalloc_bytes_per_batch=%d%n",
                    openSeconds, n, wall, cpu, samples / wall, samples / cpu, alloc / n);
        }
        System.out.println("peak_rss_kb=" + peakRssKb());
    }

    private static void digest(Path db, int batch, int seq, int count) throws Exception {
        SamplerConfig config = SamplerConfig.builder().batchSize(batch).sequenceLength(seq).build();
        try (Sampler sampler = Sampler.open(db, config)) {
            for (int i = 0; i < count; i++) {
                try (Batch b = sampler.nextTrain()) {
                    System.out.printf(Locale.ROOT, "batch %d task_idx %d U %d%n", i, b.taskIdx(), b.uniqueTexts());
                    for (String name : DIGESTED) {
                        System.out.printf(Locale.ROOT, "%s %016x%n", name, fnv1a64(b.data(name)));
                    }
                }
            }
        }
    }

    private static long fnv1a64(MemorySegment data) {
        long h = 0xcbf29ce484222325L;
        for (long i = 0; i < data.byteSize(); i++) {
            h ^= data.get(ValueLayout.JAVA_BYTE, i) & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }

    /** VmHWM of this process, or -1 where /proc is not there. */
    private static long peakRssKb() throws IOException {
        Path status = Path.of("/proc/self/status");
        if (!Files.exists(status)) {
            return -1;
        }
        for (String line : Files.readAllLines(status)) {
            if (line.startsWith("VmHWM:")) {
                return Long.parseLong(line.substring(6).replace("kB", "").trim());
            }
        }
        return -1;
    }
}
