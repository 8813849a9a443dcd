package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.SequencedMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code safetensors demo}: the options and the order of the steps, each a class of its own
 * ({@link DemoWriteStep}, {@link DemoVerifyStep}, {@link DemoThroughputStep}, {@link DemoLoaderStep},
 * {@link DemoSamplerStep}) over the data {@link DemoData} plans and regenerates.
 */
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

    @Spec
    CommandSpec spec;

    @Option(names = "--size-mb", paramLabel = "N", defaultValue = "384",
            description = "Approximate size of the tensor data in MiB (default: ${DEFAULT-VALUE}).")
    int sizeMb;

    @Option(names = "--dir", paramLabel = "DIR",
            description = "Write " + FILE_NAME + " into DIR and keep it. Default: a new temporary directory,"
                    + " deleted at the end unless --keep.")
    Path dir;

    @Option(names = "--no-progress", description = "No progress output (default: a bar on a terminal, a line every 5 s otherwise).")
    boolean noProgress;

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
            Header written = DemoWriteStep.run(out, file, plan, metadata);
            ok = DemoVerifyStep.run(out, file, plan, metadata, written);
            if (ok) {
                DemoThroughputStep.run(out, file, reps);
                ok = DemoLoaderStep.run(out, file);
            }
            if (ok && samplerRows > 0) {
                ok = DemoSamplerStep.run(out, workDir, samplerRows, seed, Progress.Mode.of(noProgress));
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

    private void line(String s) {
        Format.line(out, s);
    }
}
