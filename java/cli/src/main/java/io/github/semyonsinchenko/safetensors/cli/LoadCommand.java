package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.Slice;
import io.github.semyonsinchenko.safetensors.loader.Chunk;
import io.github.semyonsinchenko.safetensors.loader.LoadStats;
import io.github.semyonsinchenko.safetensors.loader.LoadedTensor;
import io.github.semyonsinchenko.safetensors.loader.LoaderConfig;
import io.github.semyonsinchenko.safetensors.loader.SafetensorsLoader;
import io.github.semyonsinchenko.safetensors.loader.TensorParallel;
import io.github.semyonsinchenko.safetensors.loader.TensorSelection;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import org.apache.hadoop.conf.Configuration;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "load",
        header = "Load a checkpoint from any Hadoop file system in few large reads, and verify it.",
        mixinStandardHelpOptions = true,
        description = {
            "Resolves the paths (files, directories, globs, a Hugging Face model.safetensors.index.json; file://,"
                    + " hdfs://, s3a://... with the matching Hadoop connector on the class path), reads every header"
                    + " in one ranged request, plans contiguous chunks and loads this rank's chunks with the chunked"
                    + " loader (or one request per tensor with --legacy).",
            "Verifies that every tensor of the rank arrives once with the size its header gives, and prints a"
                    + " digest (sum over tensors of CRC32C(name) << 32 | CRC32C(bytes)): the digests of all ranks"
                    + " add up to the digest of a single-rank load, and --legacy gives the same digest.",
            "Knobs not given here come from safetensors.loader.* system properties or SAFETENSORS_LOADER_*"
                    + " environment variables (see docs/loader.md)."
        })
final class LoadCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "URI", arity = "1..*", description = "Checkpoint files, directories, globs or index files.")
    List<String> uris;

    @Option(names = "--world-size", paramLabel = "N", defaultValue = "1", description = "Cooperating processes (default: ${DEFAULT-VALUE}).")
    int worldSize;

    @Option(names = "--rank", paramLabel = "R", defaultValue = "0", description = "This process's rank (default: ${DEFAULT-VALUE}).")
    int rank;

    @Option(names = "--all-ranks", description = "Read every chunk, not only this rank's.")
    boolean allRanks;

    @Option(names = "--to", paramLabel = "DTYPE", description = "Convert floating-point tensors to DTYPE (e.g. F32) on the way out.")
    Dtype to;

    @Option(names = "--legacy", description = "One ranged read per tensor (the pre-chunking path).")
    boolean legacy;

    @Option(names = "--chunk-mb", paramLabel = "N", description = "Chunk size limit in MiB.")
    Long chunkMb;

    @Option(names = "--request-mb", paramLabel = "N", description = "Largest single request in MiB; smaller than a chunk splits it into concurrent requests.")
    Integer requestMb;

    @Option(names = "--threads", paramLabel = "N", description = "Worker threads (requests in flight).")
    Integer threads;

    @Option(names = "--conf", paramLabel = "KEY=VALUE", description = "A Hadoop setting, e.g. fs.s3a.endpoint=http://127.0.0.1:9000 (repeatable).")
    Map<String, String> conf = Map.of();

    @Option(names = "--no-progress", description = "No live progress line.")
    boolean noProgress;

    @Option(names = "--tensors", paramLabel = "GLOB", description = "Load only tensors whose name matches GLOB; repeatable.")
    List<String> tensors = List.of();

    @Option(names = "--slice", paramLabel = "[GLOB=]SLICE", description = "The slice of the tensors matching GLOB (all"
            + " selected ones without GLOB=); repeatable, the first match wins.")
    List<String> slices = List.of();

    @Option(names = "--tensor-parallel", description = "--world-size/--rank form a tensor-parallel group: each rank"
            + " loads its block of every tensor of rank >= 2.")
    boolean tensorParallel;

    @Option(names = "--tp-dim", paramLabel = "D", defaultValue = "0", description = "With --tensor-parallel, the"
            + " dimension split (default: ${DEFAULT-VALUE}, column parallel).")
    int tpDim;

    @Option(names = "--row-parallel", paramLabel = "GLOB", description = "With --tensor-parallel, tensors split along"
            + " dimension 1 instead (e.g. '*.o_proj.weight'); repeatable.")
    List<String> rowParallel = List.of();

    /** The tensors and slices asked for, and with --tensor-parallel this rank's blocks. */
    private TensorSelection selection() {
        TensorSelection sel = tensors.isEmpty() ? TensorSelection.all() : TensorSelection.globs(tensors);
        SliceRules rules;
        try {
            rules = SliceRules.parse(slices);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        TensorParallel tp = tensorParallel ? TensorParallel.of(worldSize, rank).dim(tpDim)
                .rowParallel(rowParallel.toArray(String[]::new)) : null;
        return sel.slices(info -> {
            Slice given = rules.sliceOf(info.name());
            return given != null || tp == null ? given : tp.sliceOf(info);
        });
    }

    @Override
    public Integer call() throws IOException {
        if (worldSize < 1 || rank < 0 || rank >= worldSize) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--rank must be in [0, --world-size); got rank " + rank + " of " + worldSize);
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Configuration hadoop = new Configuration();
        conf.forEach(hadoop::set);
        if (!tensorParallel && (tpDim != 0 || !rowParallel.isEmpty())) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--tp-dim and --row-parallel need --tensor-parallel");
        }
        TensorSelection selection = selection();
        // In a tensor-parallel group every rank reads its part of every tensor: no chunk ownership.
        LoaderConfig.Builder b = LoaderConfig.fromEnvironment().hadoopConf(hadoop)
                .rank(tensorParallel ? 0 : rank, tensorParallel ? 1 : worldSize).readAll(allRanks).convertTo(to);
        if (legacy) {
            b.legacy(true);
        }
        if (chunkMb != null) {
            b.chunkBytes(chunkMb << 20);
        }
        if (requestMb != null) {
            b.requestBytes(Math.toIntExact(Math.min(Integer.MAX_VALUE, (long) requestMb << 20)));
        }
        if (threads != null) {
            b.workerThreads(threads);
        }
        LoaderConfig config;
        try {
            config = b.build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        try (SafetensorsLoader loader = SafetensorsLoader.open(config, selection, uris)) {
            List<Chunk> chunks = loader.chunksToRead();
            long planned = chunks.stream().mapToLong(Chunk::byteSize).sum();
            int tensorCount = chunks.stream().mapToInt(c -> c.tensors().size()).sum();
            out.println(Format.fmt("%d file(s), %d tensors in %d chunks; rank %d of %d%s reads %d chunks (%s, %d tensors)%s",
                    loader.files().size(), loader.plan().tensorCount(), loader.plan().chunks().size(), rank, worldSize,
                    tensorParallel ? " (tensor parallel)" : "", chunks.size(), Format.size(planned), tensorCount,
                    config.legacy() ? ", legacy: one request per tensor" : ""));
            out.flush();
            Progress progress = noProgress ? null : new Progress(err, loader.stats(), planned);
            long digest = 0;
            long bytesOut = 0;
            Set<String> seen = new HashSet<>();
            try {
                LoadedTensor t;
                while ((t = loader.next()) != null) {
                    try (LoadedTensor closing = t) {
                        long expected = t.dtype().storageBytes(product(t.shape()));
                        if (t.byteSize() != expected) {
                            throw new IOException(t.file() + ": tensor " + t.name() + " has " + t.byteSize()
                                    + " bytes, its dtype and shape need " + expected);
                        }
                        if (!seen.add(t.file() + "\u0000" + t.name())) {
                            throw new IOException(t.file() + ": tensor " + t.name() + " was handed out twice");
                        }
                        digest += t.digest();
                        bytesOut += t.byteSize();
                    }
                }
            } finally {
                if (progress != null) {
                    progress.stop();
                }
            }
            if (seen.size() != tensorCount) {
                throw new IOException("expected " + tensorCount + " tensors, got " + seen.size());
            }
            LoadStats s = loader.stats();
            out.println(Format.fmt("loaded %d tensors (%s of them), %s read in %d data requests (%d retries) + %d header"
                            + " requests, %.2f s, %.1f MB/s", seen.size(), Format.size(s.bytesHandedOut()),
                    Format.size(s.dataBytes()), s.dataRequests(), s.retries(), s.headerRequests(), s.seconds(),
                    s.megabytesPerSecond()));
            out.println(Format.fmt("verified: every tensor once, sizes match the headers; %s handed out (%d bytes);"
                    + " digest %016x", Format.size(bytesOut), bytesOut, digest));
            out.flush();
        }
        return SafetensorsCli.EXIT_OK;
    }

    private static long product(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    /** A live one-line progress bar on stderr: bytes, requests, MB/s. */
    private static final class Progress {
        private final Thread thread;
        private volatile boolean running = true;

        Progress(PrintWriter err, LoadStats stats, long total) {
            thread = new Thread(() -> {
                while (running) {
                    draw(err, stats, total, false);
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        break; // stop() wants the final line now
                    }
                }
                draw(err, stats, total, true);
            }, "load-progress");
            thread.setDaemon(true);
            thread.start();
        }

        private static void draw(PrintWriter err, LoadStats stats, long total, boolean last) {
            long done = stats.dataBytes();
            double frac = total == 0 ? 1 : Math.min(1, (double) done / total);
            int width = 30;
            int filled = (int) Math.round(frac * width);
            err.print(Format.fmt("\r[%s%s] %5.1f%%  %s / %s  %d requests  %.1f MB/s ", "#".repeat(filled),
                    ".".repeat(width - filled), frac * 100, Format.size(done), Format.size(total),
                    stats.requests(), stats.megabytesPerSecond()));
            if (last) {
                err.println();
            }
            err.flush();
        }

        void stop() {
            running = false;
            thread.interrupt();
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
