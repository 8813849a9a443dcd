package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.sampler.Batch;
import io.github.semyonsinchenko.safetensors.sampler.BatchBuilder;
import io.github.semyonsinchenko.safetensors.sampler.SamplerConfig;
import io.github.semyonsinchenko.safetensors.sampler.SeedShards;
import io.github.semyonsinchenko.safetensors.sampler.Split;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.TableMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskData;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskMetadata;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticDatabase;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "sampler",
        header = "Inspect and sample a relational database in headwater's format.",
        mixinStandardHelpOptions = true,
        description = "A database directory written by headwater's preprocessor (or 'sampler generate'):"
                + " metadata.json, graph.bin, tables/, tasks/ and the embedding files.",
        subcommands = {
            SamplerCommand.Info.class,
            SamplerCommand.Splits.class,
            SamplerCommand.Batches.class,
            SamplerCommand.Bench.class,
            SamplerCommand.Generate.class
        })
final class SamplerCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: choose one of "
                + String.join(", ", spec.subcommands().keySet()));
    }

    /** Sampling options shared by 'batches' and 'bench'; defaults are the reference's. */
    static final class SamplingOptions {
        @Option(names = "--batch", paramLabel = "B", defaultValue = "32", description = "Batch size (default: ${DEFAULT-VALUE}).")
        int batch;

        @Option(names = "--seq", paramLabel = "S", defaultValue = "1024",
                description = "Cells per sequence, at most 65535 (default: ${DEFAULT-VALUE}).")
        int seq;

        @Option(names = "--max-rows", paramLabel = "R", defaultValue = "200",
                description = "Rows per sequence, the fk_adj size (default: ${DEFAULT-VALUE}).")
        int maxRows;

        @Option(names = "--seed", paramLabel = "X", defaultValue = "42", description = "Sampling seed (default: ${DEFAULT-VALUE}).")
        long seed;

        @Option(names = "--split-seed", paramLabel = "X", defaultValue = "123",
                description = "Split-assignment seed (default: ${DEFAULT-VALUE}).")
        long splitSeed;

        @Option(names = "--rank", paramLabel = "R", defaultValue = "0", description = "This rank (default: ${DEFAULT-VALUE}).")
        int rank;

        @Option(names = "--world-size", paramLabel = "W", defaultValue = "1", description = "Ranks (default: ${DEFAULT-VALUE}).")
        int worldSize;

        @Option(names = "--threads", paramLabel = "T",
                description = "Threads building the sequences of a batch (default: available processors).")
        Integer threads;

        SamplerConfig config(CommandSpec spec) {
            try {
                SamplerConfig.Builder b = SamplerConfig.builder().batchSize(batch).sequenceLength(seq)
                        .maxRowsPerSeq(maxRows).seed(seed).splitSeed(splitSeed).rank(rank, worldSize);
                if (threads != null) {
                    b.threads(threads);
                }
                return b.build();
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
        }
    }

    @Command(name = "info", header = "Tables, rows, edges, tasks and seeds per split.", mixinStandardHelpOptions = true)
    static final class Info implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "DB", description = "The database directory.")
        Path db;

        @Override
        public Integer call() throws IOException {
            PrintWriter out = spec.commandLine().getOut();
            try (Database d = Database.open(db)) {
                DatabaseMetadata m = d.metadata();
                out.println("database " + db);
                out.println(Format.fmt("  %s rows, %s FK edges, %d columns, %s categorical and %s text embeddings",
                        Format.count(d.numRows()), Format.count(d.graph().numEdges()), m.numColumns(),
                        Format.count(d.categoricalEmbeddings().rows()), Format.count(d.textEmbeddings().rows())));
                out.println("  tables:");
                for (TableMetadata t : m.tables()) {
                    out.println(Format.fmt("    %-24s %12s rows  %3d columns  pkey %s  temporal %s", t.name(),
                            Format.count(t.numRows()), t.numColumns(), name(m, t.pkeyCol()), name(m, t.temporalCol())));
                }
                SeedShards shards = new SeedShards(d, SamplerConfig.builder().build());
                out.println("  tasks (seeds per split at split_seed 123, ratios 0.8/0.1/0.1, one rank):");
                for (int i = 0; i < m.tasks().size(); i++) {
                    TaskMetadata t = m.tasks().get(i);
                    out.println(Format.fmt("    %d %-28s %-11s anchor %-12s %10s seeds: train %s, val %s, test %s", i,
                            t.name(), t.targetStype().jsonName(), m.tables().get(t.anchorTable()).name(),
                            Format.count(t.numSeeds()), Format.count(shards.shard(Split.TRAIN, i).length),
                            Format.count(shards.shard(Split.VAL, i).length),
                            Format.count(shards.shard(Split.TEST, i).length)));
                }
            }
            out.flush();
            return SafetensorsCli.EXIT_OK;
        }

        private static String name(DatabaseMetadata m, int col) {
            return col < 0 ? "-" : m.columns().get(col).name();
        }
    }

    @Command(name = "splits", header = "Every seed's split, as TSV: task, seed index, anchor row, split.",
            mixinStandardHelpOptions = true)
    static final class Splits implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "DB", description = "The database directory.")
        Path db;

        @Option(names = "--task", paramLabel = "T", description = "Only this task (name or index).")
        String task;

        @Option(names = "--limit", paramLabel = "N", description = "At most N seeds per task.")
        Integer limit;

        @Option(names = "--split-seed", paramLabel = "X", defaultValue = "123", description = "Default: ${DEFAULT-VALUE}.")
        long splitSeed;

        @Option(names = "--ratios", paramLabel = "TRAIN,VAL", defaultValue = "0.8,0.1", split = ",",
                description = "Train and val ratios (default: ${DEFAULT-VALUE}).")
        float[] ratios;

        @Override
        public Integer call() throws IOException {
            if (ratios.length != 2) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--ratios takes TRAIN,VAL");
            }
            PrintWriter out = spec.commandLine().getOut();
            try (Database d = Database.open(db)) {
                int only = -1;
                if (task != null) {
                    only = d.metadata().taskIndex(task);
                    if (only < 0 && task.matches("\\d+") && Integer.parseInt(task) < d.numTasks()) {
                        only = Integer.parseInt(task);
                    }
                    if (only < 0) {
                        throw new CommandLine.ParameterException(spec.commandLine(), "no task " + task
                                + "; tasks: " + String.join(", ", d.metadata().taskNames()));
                    }
                }
                out.println("task\tseed_idx\tanchor_row\tsplit");
                for (int t = 0; t < d.numTasks(); t++) {
                    if (only >= 0 && t != only) {
                        continue;
                    }
                    TaskData td = d.task(t);
                    int n = limit == null ? td.numSeeds() : Math.min(limit, td.numSeeds());
                    for (int i = 0; i < n; i++) {
                        int a = td.anchorRow(i);
                        out.println(td.metadata().name() + "\t" + i + "\t" + Integer.toUnsignedString(a) + "\t"
                                + Split.assign(t, a, splitSeed, ratios[0], ratios[1]).label());
                    }
                }
            }
            out.flush();
            return SafetensorsCli.EXIT_OK;
        }
    }

    @Command(name = "batches", header = "Write the first N batches of a split as safetensors files.",
            mixinStandardHelpOptions = true,
            description = "The batches the reference's producer for that split yields first, with the"
                    + " reference's defaults; one file each (batch-00000.safetensors, ...), tensor names = the"
                    + " Python dict keys.")
    static final class Batches implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "DB", description = "The database directory.")
        Path db;

        @Option(names = "--split", paramLabel = "train|val", defaultValue = "train",
                description = "Which producer (default: ${DEFAULT-VALUE}).")
        String split;

        @Option(names = "--count", paramLabel = "N", defaultValue = "1", description = "Batches (default: ${DEFAULT-VALUE}).")
        int count;

        @Option(names = "--out", paramLabel = "DIR", required = true, description = "Output directory (created).")
        Path outDir;

        @Mixin
        SamplingOptions sampling;

        @Override
        public Integer call() throws IOException {
            Split s = switch (split.toLowerCase(Locale.ROOT)) {
                case "train" -> Split.TRAIN;
                case "val" -> Split.VAL;
                default -> throw new CommandLine.ParameterException(spec.commandLine(),
                        "--split must be train or val, not " + split);
            };
            if (count < 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--count must be >= 0");
            }
            SamplerConfig config = sampling.config(spec);
            PrintWriter out = spec.commandLine().getOut();
            Files.createDirectories(outDir);
            try (Database d = Database.open(db); BatchBuilder builder = new BatchBuilder(d, config)) {
                BatchBuilder.Stream stream = builder.stream(s);
                if (!stream.hasSeeds()) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "no " + s.label()
                            + " seeds on rank " + config.rank() + " of " + config.worldSize());
                }
                for (int i = 0; i < count; i++) {
                    Path file = outDir.resolve(String.format(Locale.ROOT, "batch-%05d.safetensors", i));
                    try (Batch b = stream.next()) {
                        b.writeTo(file);
                        out.println(Format.fmt("%s  task %d (%s)  %d distinct texts", file, b.taskIdx(),
                                b.targetStype().jsonName(), b.uniqueTexts()));
                    }
                    out.flush();
                }
            }
            return SafetensorsCli.EXIT_OK;
        }
    }

    @Command(name = "bench", header = "Batches/s and samples/s of the train producer.", mixinStandardHelpOptions = true,
            description = "Builds --warmup batches, then times --batches more on the calling thread plus"
                    + " --threads - 1 workers (no prefetch queue), closing each batch so memory is reused.")
    static final class Bench implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "DB", description = "The database directory.")
        Path db;

        @Option(names = "--batches", paramLabel = "N", defaultValue = "50", description = "Timed batches (default: ${DEFAULT-VALUE}).")
        int batches;

        @Option(names = "--warmup", paramLabel = "N", defaultValue = "10", description = "Untimed batches first (default: ${DEFAULT-VALUE}).")
        int warmup;

        @Mixin
        SamplingOptions sampling;

        @Option(names = "--no-progress", description = "No progress output (default: a bar on a terminal, a line every 5 s otherwise).")
        boolean noProgress;

        @Override
        public Integer call() throws IOException {
            if (batches < 1 || warmup < 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--batches >= 1 and --warmup >= 0");
            }
            SamplerConfig config = sampling.config(spec);
            PrintWriter out = spec.commandLine().getOut();
            try (Database d = Database.open(db)) {
                Result r = run(d, config, warmup, batches, spec.commandLine().getErr(), Progress.Mode.of(noProgress));
                out.println(Format.fmt("%.1f batches/s, %.0f samples/s (B=%d, S=%d, threads=%d, %d batches in %.2f s);"
                                + " %.0f samples per CPU-second of the process (load average %.1f)",
                        r.batchesPerSecond(), r.samplesPerSecond(), config.batchSize(), config.sequenceLength(),
                        config.threads(), batches, r.seconds(), r.samplesPerCpuSecond(), loadAverage()));
            }
            out.flush();
            return SafetensorsCli.EXIT_OK;
        }

        /** Wall-clock rates, and samples per CPU-second of the whole process (fairer on a shared machine). */
        record Result(double seconds, double batchesPerSecond, double samplesPerSecond, double samplesPerCpuSecond) {}

        static double loadAverage() {
            return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        }

        private static long processCpuNanos() {
            if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                    instanceof com.sun.management.OperatingSystemMXBean os) {
                return os.getProcessCpuTime();
            }
            return -1;
        }

        /** Times {@code batches} train batches after {@code warmup}, reporting progress on {@code err} in {@code mode}. */
        static Result run(Database d, SamplerConfig config, int warmup, int batches, PrintWriter err,
                          Progress.Mode mode) {
            try (BatchBuilder builder = new BatchBuilder(d, config)) {
                BatchBuilder.Stream stream = builder.stream(Split.TRAIN);
                if (!stream.hasSeeds()) {
                    throw new IllegalStateException("no train seeds on this rank");
                }
                try (Progress progress = new Progress(err, mode, "warmup", warmup, Long::toString)) {
                    for (int i = 0; i < warmup; i++) {
                        stream.next().close();
                        progress.update(i + 1, "");
                    }
                }
                long start = System.nanoTime();
                long cpuStart = processCpuNanos();
                try (Progress progress = new Progress(err, mode, "timed", batches, Long::toString)) {
                    for (int i = 0; i < batches; i++) {
                        stream.next().close();
                        double secs = (System.nanoTime() - start) / 1e9;
                        progress.update(i + 1, Format.fmt("%.0f samples/s", (i + 1) * (double) config.batchSize() / secs));
                    }
                }
                double secs = (System.nanoTime() - start) / 1e9;
                double cpu = (processCpuNanos() - cpuStart) / 1e9;
                double samples = batches * (double) config.batchSize();
                return new Result(secs, batches / secs, samples / secs, cpuStart < 0 ? Double.NaN : samples / cpu);
            }
        }
    }

    @Command(name = "generate", header = "Write a synthetic database (every stype, three task kinds).",
            mixinStandardHelpOptions = true)
    static final class Generate implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(paramLabel = "DIR", description = "A new directory.")
        Path dir;

        @Option(names = "--rows", paramLabel = "N", defaultValue = "100000", description = "Rows in all (default: ${DEFAULT-VALUE}).")
        int rows;

        @Option(names = "--seed", paramLabel = "X", defaultValue = "1", description = "Default: ${DEFAULT-VALUE}.")
        long seed;

        @Option(names = "--zero-embeddings", description = "Zero vectors instead of random unit vectors.")
        boolean zero;

        @Override
        public Integer call() throws IOException {
            if (rows < 40) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--rows must be at least 40");
            }
            long t0 = System.nanoTime();
            SyntheticDatabase.Summary s = SyntheticDatabase.generate(dir, rows, seed,
                    zero ? SyntheticDatabase.Embeddings.ZERO : SyntheticDatabase.Embeddings.RANDOM_UNIT);
            spec.commandLine().getOut().println(Format.fmt(
                    "%s: %s rows, %s edges, %d columns, %d tasks, %s text embeddings (%.1f s)", s.dir(),
                    Format.count(s.rows()), Format.count(s.edges()), s.columns(), s.tasks(), Format.count(s.textRows()),
                    (System.nanoTime() - t0) / 1e9));
            spec.commandLine().getOut().flush();
            return SafetensorsCli.EXIT_OK;
        }
    }
}
