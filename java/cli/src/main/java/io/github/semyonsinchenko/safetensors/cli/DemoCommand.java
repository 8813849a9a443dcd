package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.loader.LoadStats;
import io.github.semyonsinchenko.safetensors.loader.LoadedTensor;
import io.github.semyonsinchenko.safetensors.loader.LoaderConfig;
import io.github.semyonsinchenko.safetensors.loader.MetadataCache;
import io.github.semyonsinchenko.safetensors.loader.SafetensorsLoader;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import io.github.semyonsinchenko.safetensors.sampler.SamplerConfig;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticDatabase;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
        name = "demo",
        header = "Write, reopen, verify and read back mixed-dtype tensors; measure read GB/s.",
        mixinStandardHelpOptions = true,
        description = {
            "End to end in one run: generates tensors of mixed dtypes (BF16, F16, F32, F64, I64, I32, U8, BOOL, a"
                    + " scalar, an empty tensor) with __metadata__ off-heap, streams them into a file with"
                    + " SafetensorsWriter, reopens it with SafetensorsFile.open, checks every tensor byte for byte"
                    + " against regenerated data, prints the tensor table, then measures read throughput.",
            "Read throughput: MemorySegment.copy of every tensor out of the mapped file into an off-heap"
                    + " buffer, best of --reps, next to the same copies between two off-heap buffers in the same"
                    + " run (the baseline). The file is in the page cache by then, so this is the cost of reading"
                    + " through the mapping, not of the disk.",
            "Memory: a 4 MiB generator buffer, plus 2 x the data size of off-heap memory for the throughput step."
        })
final class DemoCommand implements Callable<Integer> {
    static final String FILE_NAME = "demo.safetensors";
    private static final long MIB = 1L << 20;
    private static final int CHUNK = 4 << 20;

    @Spec
    CommandSpec spec;

    @Option(names = "--size-mb", paramLabel = "N", defaultValue = "384",
            description = "Approximate size of the tensor data in MiB (default: ${DEFAULT-VALUE}).")
    int sizeMb;

    @Option(names = "--dir", paramLabel = "DIR",
            description = "Write " + FILE_NAME + " into DIR and keep it. Default: a new temporary directory,"
                    + " deleted at the end unless --keep.")
    Path dir;

    @Option(names = "--keep", description = "Keep the temporary directory and the file.")
    boolean keep;

    @Option(names = "--reps", paramLabel = "N", defaultValue = "10",
            description = "Repetitions of each throughput measurement; the best counts (default: ${DEFAULT-VALUE}).")
    int reps;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "20240611",
            description = "Seed of the pseudo-random contents (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--sampler-rows", paramLabel = "N", defaultValue = "20000",
            description = "Rows of the synthetic database of the sampler step; 0 skips it (default: ${DEFAULT-VALUE}).")
    int samplerRows;

    private PrintWriter out;

    @Override
    public Integer call() throws IOException {
        if (sizeMb < 1 || sizeMb > (1 << 20)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--size-mb must be in [1, 1048576], not "
                    + sizeMb);
        }
        if (reps < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--reps must be at least 1");
        }
        out = spec.commandLine().getOut();
        boolean temporary = dir == null;
        Path workDir = temporary ? Files.createTempDirectory("safetensors-demo-") : Files.createDirectories(dir);
        Path file = workDir.resolve(FILE_NAME);

        List<DemoData.Planned> plan = DemoData.plan(sizeMb * MIB, seed);
        SequencedMap<String, String> metadata = new LinkedHashMap<>();
        metadata.put("format", "pt");
        metadata.put("generator", "safetensors-jvm demo");
        metadata.put("seed", Long.toString(seed));
        metadata.put("size_mb", Integer.toString(sizeMb));

        line("safetensors-jvm demo");
        line("  kernels:  " + kernelPath());
        line("  JVM:      " + Runtime.version() + ", " + Runtime.getRuntime().availableProcessors() + " cores, max heap "
                + Format.size(Runtime.getRuntime().maxMemory()));
        line("  file:     " + file + (temporary ? (keep ? " (temporary, kept: --keep)"
                : " (temporary, deleted at the end; --keep keeps it)") : ""));
        boolean ok = false;
        try {
            Header written = write(file, plan, metadata);
            ok = verify(file, plan, metadata, written);
            if (ok) {
                measure(file);
                ok = loaderStep(file);
            }
            if (ok && samplerRows > 0) {
                ok = samplerStep(workDir);
            }
        } finally {
            if (temporary && !keep) {
                Files.deleteIfExists(file);
                Files.deleteIfExists(workDir);
            }
        }
        line("");
        line(ok ? "demo finished: every tensor verified" : "demo FAILED: the file does not hold what was written");
        return ok ? SafetensorsCli.EXIT_OK : SafetensorsCli.EXIT_INVALID;
    }

    private static String kernelPath() {
        return Kernels.nativeVersion()
                .map(v -> "native library " + v + ", ISA " + Kernels.nativeIsa().orElse("?"))
                .orElse("Java fallback (the native library is not loaded)");
    }

    // ------------------------------------------------------------------ 1. write

    private Header write(Path file, List<DemoData.Planned> plan, Map<String, String> metadata) throws IOException {
        long total = plan.stream().mapToLong(DemoData.Planned::bytes).sum();
        line("");
        line("[1/4] write: " + plan.size() + " tensors, " + Format.count(total) + " data bytes ("
                + Format.size(total) + "), generated off-heap in " + Format.size(CHUNK)
                + " chunks and streamed by SafetensorsWriter (sibling temp file, fsync, atomic rename)");
        SafetensorsWriter writer = new SafetensorsWriter().metadata(metadata);
        long[] done = {0, 0}; // tensors, bytes
        line("  tensors done  bytes done  name" + " ".repeat(38) + " dtype shape                    size  avg rate");
        long start = System.nanoTime();
        Header header;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(CHUNK, 8);
            for (DemoData.Planned p : plan) {
                writer.add(p.name(), p.dtype(), p.shape(), channel -> {
                    DemoData.Stream s = new DemoData.Stream(p);
                    while (s.remaining() > 0) {
                        long n = s.next(buf);
                        ByteBuffer bb = buf.asSlice(0, n).asByteBuffer();
                        while (bb.hasRemaining()) {
                            channel.write(bb);
                        }
                    }
                    done[0]++;
                    done[1] += p.bytes();
                    double secs = (System.nanoTime() - start) / 1e9;
                    line(Format.fmt("  [%2d/%d]       %5.1f%%     %-42s %-5s %-18s %10s  %5.0f MB/s", done[0], plan.size(),
                            total == 0 ? 100.0 : 100.0 * done[1] / total, p.name(), p.dtype(),
                            Arrays.toString(p.shape()), Format.size(p.bytes()), done[1] / 1e6 / secs));
                });
            }
            header = writer.write(file);
        }
        double secs = (System.nanoTime() - start) / 1e9;
        line(Format.fmt("  wrote %s bytes in %.2f s (%.0f MB/s including generation and fsync); header %s bytes",
                Format.count(header.fileSize()), secs, header.fileSize() / 1e6 / secs,
                Format.count(header.headerLength())));
        return header;
    }

    // ------------------------------------------------------------------ 2 + 3. open, verify

    private boolean verify(Path file, List<DemoData.Planned> plan, Map<String, String> metadata, Header written)
            throws IOException {
        line("");
        long t0 = System.nanoTime();
        SafetensorsFile first = SafetensorsFile.open(file);
        long firstNs = System.nanoTime() - t0;
        first.close();
        long bestNs = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            long t = System.nanoTime();
            SafetensorsFile f = SafetensorsFile.open(file);
            bestNs = Math.min(bestNs, System.nanoTime() - t);
            f.close();
        }
        line(Format.fmt("[2/4] open + validate: SafetensorsFile.open read the %s-byte header, checked every rule"
                + " and mapped %s in %.2f ms (first open, incl. class loading: %.2f ms)",
                Format.count(written.headerLength()), Format.size(written.fileSize()), bestNs / 1e6, firstNs / 1e6));

        line("");
        line("[3/4] verify: every tensor compared byte for byte with its regenerated contents");
        boolean ok = true;
        long checked = 0;
        long start = System.nanoTime();
        try (SafetensorsFile f = SafetensorsFile.open(file, MappedFile.Sharing.CONFINED);
             Arena arena = Arena.ofConfined()) {
            if (!f.metadata().equals(metadata)) {
                line("  metadata differs: wrote " + metadata + ", read " + f.metadata());
                ok = false;
            }
            if (!f.header().tensors().equals(written.tensors())) {
                line("  the tensor table read back differs from the one written");
                ok = false;
            }
            MemorySegment buf = arena.allocate(CHUNK, 8);
            List<String> results = new ArrayList<>();
            for (Tensor t : f) {
                DemoData.Planned p = plan.stream().filter(q -> q.name().equals(t.name())).findFirst().orElse(null);
                String result = p == null ? "unexpected tensor" : check(t, p, buf);
                ok &= result.equals("ok");
                checked += t.byteSize();
                results.add(result);
            }
            if (f.size() != plan.size()) {
                line("  the file has " + f.size() + " tensors, " + plan.size() + " were written");
                ok = false;
            }
            double secs = (System.nanoTime() - start) / 1e9;
            line("  metadata: " + f.metadata());
            Format.printTensorTable(out, f.header(), "  ", "verified", results);
            line(Format.fmt("  %s: %d tensors, %s bytes compared in %.2f s", ok ? "all equal" : "MISMATCH",
                    f.size(), Format.count(checked), secs));
        }
        out.flush();
        return ok;
    }

    /** "ok", or where the mapped bytes first differ from the regenerated ones. */
    private static String check(Tensor t, DemoData.Planned p, MemorySegment buf) {
        if (t.dtype() != p.dtype() || !Arrays.equals(t.shape(), p.shape())) {
            return "dtype/shape differ";
        }
        MemorySegment data = t.data();
        DemoData.Stream s = new DemoData.Stream(p);
        long off = 0;
        while (s.remaining() > 0) {
            long n = s.next(buf);
            long at = MemorySegment.mismatch(buf, 0, n, data, off, off + n);
            if (at >= 0) {
                return "differs at byte " + (off + at);
            }
            off += n;
        }
        return off == data.byteSize() ? "ok" : "length differs";
    }

    // ------------------------------------------------------------------ 4. throughput

    private void measure(Path file) throws IOException {
        line("");
        try (SafetensorsFile f = SafetensorsFile.open(file, MappedFile.Sharing.CONFINED);
             Arena arena = Arena.ofConfined()) {
            long total = f.header().dataSize();
            line("[4/4] read throughput: MemorySegment.copy of all " + f.size() + " tensors (" + Format.size(total)
                    + ") from a fresh mapping into an off-heap buffer, vs the same copies off-heap -> off-heap;"
                    + " best of " + reps);
            if (total == 0) {
                line("  nothing to copy");
                return;
            }
            List<TensorInfo> infos = f.header().tensors();
            List<MemorySegment> slices = new ArrayList<>(infos.size());
            for (Tensor t : f) {
                slices.add(t.data());
            }
            // Arena.allocate zeroes the memory, so both buffers are resident before timing.
            MemorySegment dst = arena.allocate(total, 4096);
            MemorySegment src = arena.allocate(total, 4096);
            double bestRead = 0;
            double bestBase = 0;
            line("  rep   mmap -> off-heap   off-heap -> off-heap");
            // The first read also fills the baseline's source with the same bytes.
            long firstRead = readAll(slices, infos, dst);
            src.copyFrom(dst);
            for (int r = 1; r <= reps; r++) {
                // Alternate which copy goes first, so neither always runs right after the other.
                long readNs;
                long baseNs;
                if (r % 2 == 1) {
                    readNs = r == 1 ? firstRead : readAll(slices, infos, dst);
                    baseNs = copyAll(src, infos, dst);
                } else {
                    baseNs = copyAll(src, infos, dst);
                    readNs = readAll(slices, infos, dst);
                }
                double read = total / (readNs / 1e9) / 1e9;
                double base = total / (baseNs / 1e9) / 1e9;
                bestRead = Math.max(bestRead, read);
                bestBase = Math.max(bestBase, base);
                line(Format.fmt("  %3d   %9.2f GB/s     %9.2f GB/s%s", r, read, base,
                        r == 1 ? "   (first read maps the pages: minor faults)" : ""));
            }
            // Whichever copy ran last, dst must hold the file's bytes.
            for (int i = 0; i < slices.size(); i++) {
                MemorySegment s = slices.get(i);
                long begin = infos.get(i).begin();
                if (MemorySegment.mismatch(s, 0, s.byteSize(), dst, begin, begin + s.byteSize()) >= 0) {
                    throw new IllegalStateException("the copy of tensor \"" + infos.get(i).name()
                            + "\" differs from the file");
                }
            }
            line(Format.fmt("  read     %.2f GB/s  (mmap -> off-heap, best of %d; GB = 10^9 bytes)", bestRead, reps));
            line(Format.fmt("  baseline %.2f GB/s  (off-heap -> off-heap MemorySegment.copy, same run, same sizes)",
                    bestBase));
            line(Format.fmt("  ratio    %.2f  (read / baseline; 1.00 means reading the file costs a memcpy)",
                    bestRead / bestBase));
        }
    }

    /** Copies every tensor out of the mapping into dst at its offset; returns the nanoseconds taken. */
    private static long readAll(List<MemorySegment> slices, List<TensorInfo> infos, MemorySegment dst) {
        long t0 = System.nanoTime();
        for (int i = 0; i < slices.size(); i++) {
            MemorySegment s = slices.get(i);
            MemorySegment.copy(s, 0, dst, infos.get(i).begin(), s.byteSize());
        }
        return System.nanoTime() - t0;
    }

    /** The baseline: the same copies, from an off-heap buffer instead of the mapping. */
    private static long copyAll(MemorySegment src, List<TensorInfo> infos, MemorySegment dst) {
        long t0 = System.nanoTime();
        for (TensorInfo info : infos) {
            MemorySegment.copy(src, info.begin(), dst, info.begin(), info.byteSize());
        }
        return System.nanoTime() - t0;
    }

    // ------------------------------------------------------------------ sampler

    /**
     * Generates a small relational database, samples a few batches with the sampler's reference
     * defaults (B = 32, S = 1024) and reports samples/s. Leaves nothing behind.
     */
    private boolean samplerStep(Path workDir) throws IOException {
        line("");
        Path db = workDir.resolve("sampler-demo-db");
        line("[sampler] relational sampler: a synthetic database of " + Format.count(samplerRows)
                + " rows (users, posts, comments, votes; 3 tasks), then batches of 32 sequences x 1024 cells");
        try {
            long t0 = System.nanoTime();
            SyntheticDatabase.Summary s = SyntheticDatabase.generate(db, Math.max(40, samplerRows), seed,
                    SyntheticDatabase.Embeddings.RANDOM_UNIT);
            line(Format.fmt("  generated %s rows, %s FK edges, %s text embeddings in %.2f s", Format.count(s.rows()),
                    Format.count(s.edges()), Format.count(s.textRows()), (System.nanoTime() - t0) / 1e9));
            SamplerConfig config = SamplerConfig.builder().build();
            try (Database d = Database.open(db)) {
                SamplerCommand.Bench.Result r = SamplerCommand.Bench.run(d, config, 3, 10, out);
                line(Format.fmt("  sampled 10 train batches on %d threads: %.1f batches/s, %.0f samples/s",
                        config.threads(), r.batchesPerSecond(), r.samplesPerSecond()));
            }
            return true;
        } finally {
            if (Files.exists(db)) {
                try (Stream<Path> walk = Files.walk(db)) {
                    for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                        Files.deleteIfExists(p);
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------ loader: chunked vs per-tensor reads

    /**
     * Loads the file through the chunked loader (Hadoop's local file system, as it would an HDFS or
     * S3 path) and through its legacy one-request-per-tensor path, checks every tensor against the
     * mapping, and reports requests and MB/s of both in the same run.
     */
    private boolean loaderStep(Path file) throws IOException {
        line("");
        line("[loader] the same file through the chunked loader (Hadoop file://, 64 MiB chunks) and its legacy"
                + " one-request-per-tensor path; every tensor compared with the mapping");
        line("  path      chunks  requests       bytes   seconds      MB/s  tensors checked");
        boolean ok = true;
        // Untimed warm-up: the first load starts Hadoop's file system and loads the read path's classes.
        try (SafetensorsLoader warmUp = SafetensorsLoader.open(LoaderConfig.builder().legacy(true)
                .metadataCache(new MetadataCache(0)).build(), file.toUri().toString())) {
            for (LoadedTensor t : warmUp) {
                t.close();
            }
        }
        try (SafetensorsFile mapped = SafetensorsFile.open(file)) {
            for (boolean legacy : new boolean[] {false, true}) {
                LoaderConfig config = LoaderConfig.builder().chunkBytes(64 * MIB).legacy(legacy)
                        .metadataCache(new MetadataCache(0)).build();
                int checked = 0;
                try (SafetensorsLoader loader = SafetensorsLoader.open(config, file.toUri().toString())) {
                    LoadedTensor t;
                    while ((t = loader.next()) != null) {
                        try (LoadedTensor closing = t) {
                            MemorySegment expected = mapped.tensor(t.name()).data();
                            if (expected.mismatch(t.data()) >= 0) {
                                line("  tensor " + t.name() + " differs from the mapping");
                                ok = false;
                            }
                            checked++;
                        }
                    }
                    LoadStats s = loader.stats();
                    line(Format.fmt("  %-8s %7d %9d %11s %9.2f %9.1f  %d of %d", legacy ? "legacy" : "chunked",
                            loader.plan().chunks().size(), s.dataRequests() + s.headerRequests(),
                            Format.size(s.dataBytes()), s.seconds(), s.megabytesPerSecond(), checked, mapped.size()));
                    ok &= checked == mapped.size();
                }
            }
        }
        line("  (local disk, page cache warm: the request count is what matters on HDFS or S3, where each costs a"
                + " round trip)");
        return ok;
    }

    private void line(String s) {
        out.println(s);
        out.flush();
    }
}
