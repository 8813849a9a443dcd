import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.loader.LoadStats;
import io.github.semyonsinchenko.safetensors.loader.LoadedTensor;
import io.github.semyonsinchenko.safetensors.loader.LoaderConfig;
import io.github.semyonsinchenko.safetensors.loader.MetadataCache;
import io.github.semyonsinchenko.safetensors.loader.S3ProxyServer;
import io.github.semyonsinchenko.safetensors.loader.SafetensorsLoader;
import io.github.semyonsinchenko.safetensors.loader.TensorParallel;
import io.github.semyonsinchenko.safetensors.loader.TensorSelection;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

/**
 * The tensor-parallel loader benchmark: on s3proxy with a fixed delay per request, each rank of a
 * tensor-parallel group (W = 2 and 4) loads its block of every weight ({@link TensorParallel}, the
 * column-parallel split along dimension 0) against every rank loading the whole tensors, and against
 * the Python user's way (bench/loader/tp_peer.py: fsspec downloads the file whole, Hugging Face
 * {@code safetensors} {@code get_slice} cuts the block). Two checkpoints: the loader benchmark's 1 GiB
 * one (1-D tensors only, so its TP rule splits 1-D tensors too) and a transformer-shaped one (2-D
 * weights split, norms whole). Each round runs every variant once, in an order rotated per round,
 * and records the load average before it; a load's bytes come from the loader's statistics and its
 * digest must equal the local file's slices' (checked once per variant, outside the timing).
 *
 * <p>Usage: {@code TensorParallelBench <work dir> <out json> <latency ms> <rounds> [python command...]};
 * run by bench/loader/run-tp.sh.
 */
public final class TensorParallelBench {
    private static final int[] WORLDS = {2, 4};

    /** One checkpoint on the store: its local files, its URI, and the TP rule of a rank. */
    private record Checkpoint(String name, List<Path> local, String uri, boolean splitVectors) {
        TensorParallel tp(int world, int rank) {
            TensorParallel tp = TensorParallel.of(world, rank);
            return splitVectors ? tp.splitVectors("*") : tp;
        }
    }

    public static void main(String[] args) throws Exception {
        Path work = Files.createDirectories(Path.of(args[0]));
        Path outJson = Path.of(args[1]);
        int latencyMs = Integer.parseInt(args[2]);
        int rounds = Integer.parseInt(args[3]);
        List<String> python = List.of(args).subList(4, args.length);

        List<Path> gib = LoaderBench.writeCheckpoint(work.resolve("ckpt-1024MiB-1000"), 1024L << 20, 1000);
        List<Path> llm = writeTransformer(work.resolve("ckpt-transformer"));

        Map<String, String> latency = new LinkedHashMap<>();
        if (latencyMs > 0) {
            latency.put("s3proxy.latency-blobstore", "true");
            latency.put("s3proxy.latency-blobstore.*.latency", Integer.toString(latencyMs));
        }
        Path s3dir = work.resolve("s3-tp");
        LoaderBench.deleteTree(s3dir);
        Map<String, Object> result = new LinkedHashMap<>();
        List<Map<String, Object>> runs = new ArrayList<>();
        try (S3ProxyServer s3 = S3ProxyServer.start(s3dir, List.of("models"), latency)) {
            Configuration conf = s3.s3aConf();
            FileSystem fs = FileSystem.get(URI.create("s3a://models/"), conf);
            List<Checkpoint> ckpts = List.of(
                    new Checkpoint("1 GiB, 1,000 1-D tensors", gib, upload(fs, gib, "gib"), true),
                    new Checkpoint("transformer, 2-D weights", llm, upload(fs, llm, "llm"), false));
            // Variants {checkpoint, how, W, rank, gapBytes, workerThreads}: whole tensors, then every rank
            // of every world size with the defaults; for the 1 GiB checkpoint, whose ranks need hundreds
            // of small blocks, also W = 4 with a 1 MiB gap (fewer, larger reads: fewer requests, more
            // bytes) and with the 8 worker threads the loader uses off object stores (fewer requests in
            // flight than its object-store default).
            String gap = Long.toString(LoaderConfig.DEFAULT_GAP_BYTES);
            String threads = Integer.toString(LoaderConfig.builder().build().workerThreads());
            List<String[]> variants = new ArrayList<>();
            for (int c = 0; c < ckpts.size(); c++) {
                variants.add(new String[] {Integer.toString(c), "whole", "1", "0", gap, threads});
                for (int w : WORLDS) {
                    for (int r = 0; r < w; r++) {
                        variants.add(new String[] {Integer.toString(c), "tp", Integer.toString(w), Integer.toString(r),
                            gap, threads});
                    }
                }
            }
            for (int r = 0; r < 4; r++) {
                variants.add(new String[] {"0", "tp", "4", Integer.toString(r), Long.toString(1 << 20), threads});
                variants.add(new String[] {"0", "tp", "4", Integer.toString(r), gap,
                        Integer.toString(LoaderConfig.DEFAULT_WORKER_THREADS)});
            }
            // Correctness once, untimed (it also warms up both JVMs and S3A's pools).
            for (String[] v : variants) {
                Checkpoint c = ckpts.get(Integer.parseInt(v[0]));
                int w = Integer.parseInt(v[2]);
                int r = Integer.parseInt(v[3]);
                long want = expectedDigest(c, v[1].equals("tp") ? c.tp(w, r).selection() : TensorSelection.all());
                long got = load(conf, c, v, null);
                if (got != want) {
                    throw new IllegalStateException(c.name() + " " + String.join(" ", v) + ": digest "
                            + Long.toHexString(got) + ", expected " + Long.toHexString(want));
                }
            }
            System.out.printf(Locale.ROOT, "%-28s %-6s %2s %4s %8s %3s %10s %10s %7s %6s %8s  %s%n", "checkpoint",
                    "how", "W", "rank", "gap", "thr", "read MB", "share MB", "ratio", "reqs", "seconds", "load");
            for (int round = 1; round <= rounds; round++) {
                List<String[]> turn = new ArrayList<>(variants);
                Collections.rotate(turn, -((round - 1) * 3));
                for (String[] v : turn) {
                    String load = loadAverage();
                    Map<String, Object> run = new LinkedHashMap<>();
                    load(conf, ckpts.get(Integer.parseInt(v[0])), v, run);
                    run.put("round", round);
                    run.put("load_avg", load);
                    runs.add(run);
                    System.out.printf(Locale.ROOT, "%-28s %-6s %2s %4s %8s %3s %10.1f %10.1f %7.3f %6d %8.2f  %s%n",
                            run.get("checkpoint"), v[1], v[2], v[3], v[4], v[5], (long) run.get("read_bytes") / 1e6,
                            (long) run.get("share_bytes") / 1e6, (double) run.get("ratio"), run.get("requests"),
                            run.get("seconds"), load);
                }
            }
            result.put("java_runs", runs);
            if (!python.isEmpty()) {
                List<String> cmd = new ArrayList<>(python);
                cmd.addAll(List.of("--endpoint", "http://127.0.0.1:" + s3.port(), "--key", S3ProxyServer.ACCESS_KEY,
                        "--secret", S3ProxyServer.SECRET_KEY, "--bucket", "models", "--rounds",
                        Integer.toString(rounds), "--work", work.resolve("python").toString(),
                        "--out", work.resolve("tp-python.json").toString()));
                for (Checkpoint c : ckpts) {
                    cmd.add(c.name() + "=" + c.uri().substring("s3a://models/".length()) + "="
                            + (c.splitVectors() ? "vectors" : "matrices"));
                }
                Process p = new ProcessBuilder(cmd).inheritIO().start();
                if (p.waitFor() != 0) {
                    throw new IllegalStateException("the Python peer failed: " + cmd);
                }
                result.put("python_runs", Files.readString(work.resolve("tp-python.json")));
            }
            fs.close();
        }
        Map<String, Object> setup = new LinkedHashMap<>();
        setup.put("latency_ms", latencyMs);
        setup.put("default_gap", LoaderConfig.DEFAULT_GAP_BYTES);
        setup.put("default_threads", LoaderConfig.builder().build().workerThreads());
        setup.put("object_store_threads", LoaderConfig.OBJECT_STORE_WORKER_THREADS);
        setup.put("rounds", rounds);
        setup.put("cores", Runtime.getRuntime().availableProcessors());
        setup.put("jdk", Runtime.version().toString());
        for (Path p : gib) {
            setup.merge("gib_bytes", Files.size(p), (a, b) -> (long) a + (long) b);
        }
        for (Path p : llm) {
            setup.merge("llm_bytes", Files.size(p), (a, b) -> (long) a + (long) b);
        }
        result.put("setup", setup);
        Files.writeString(outJson, LoaderBench.toJson(result));
        LoaderBench.deleteTree(s3dir);
    }

    /**
     * A transformer's weights in BF16, two shards plus an index: 8 layers of hidden size 2048 and
     * MLP size 5632 (q, k, v, o: [2048, 2048]; gate, up: [5632, 2048]; down: [2048, 5632]; two
     * norms of 2048), an embedding and an LM head of [32000, 2048], a final norm: about 1 GiB.
     */
    static List<Path> writeTransformer(Path dir) throws IOException {
        Files.createDirectories(dir);
        int layers = 8;
        long hidden = 2048;
        long mlp = 5632;
        long vocab = 32000;
        List<Path> out = new ArrayList<>();
        StringBuilder index = new StringBuilder("{\"metadata\": {}, \"weight_map\": {");
        boolean first = true;
        for (int s = 0; s < 2; s++) {
            String name = String.format(Locale.ROOT, "model-%05d-of-%05d.safetensors", s + 1, 2);
            Path file = dir.resolve(name);
            out.add(file);
            SafetensorsWriter w = new SafetensorsWriter().metadata("format", "pt");
            Map<String, long[]> tensors = new LinkedHashMap<>();
            if (s == 0) {
                tensors.put("model.embed_tokens.weight", new long[] {vocab, hidden});
            } else {
                tensors.put("lm_head.weight", new long[] {vocab, hidden});
                tensors.put("model.norm.weight", new long[] {hidden});
            }
            for (int l = s * layers / 2; l < (s + 1) * layers / 2; l++) {
                String p = "model.layers." + l + ".";
                tensors.put(p + "input_layernorm.weight", new long[] {hidden});
                tensors.put(p + "post_attention_layernorm.weight", new long[] {hidden});
                for (String m : new String[] {"q_proj", "k_proj", "v_proj", "o_proj"}) {
                    tensors.put(p + "self_attn." + m + ".weight", new long[] {hidden, hidden});
                }
                tensors.put(p + "mlp.gate_proj.weight", new long[] {mlp, hidden});
                tensors.put(p + "mlp.up_proj.weight", new long[] {mlp, hidden});
                tensors.put(p + "mlp.down_proj.weight", new long[] {hidden, mlp});
            }
            long seed = s * 1000;
            for (var e : tensors.entrySet()) {
                long bytes = e.getValue().length == 1 ? e.getValue()[0] * 2 : e.getValue()[0] * e.getValue()[1] * 2;
                long sd = seed++;
                w.add(e.getKey(), Dtype.BF16, e.getValue(), ch -> LoaderBench.fill(ch, bytes, sd));
                index.append(first ? "" : ", ").append('"').append(e.getKey()).append("\": \"").append(name)
                        .append('"');
                first = false;
            }
            if (!Files.exists(file)) {
                w.write(file);
            }
        }
        Files.writeString(dir.resolve("model.safetensors.index.json"), index.append("}}").toString());
        return out;
    }

    private static String upload(FileSystem fs, List<Path> files, String prefix) throws IOException {
        for (Path p : files) {
            try (var out = fs.create(new org.apache.hadoop.fs.Path("s3a://models/" + prefix + "/" + p.getFileName()))) {
                Files.copy(p, out);
            }
        }
        Path index = files.getFirst().resolveSibling("model.safetensors.index.json");
        try (var out = fs.create(new org.apache.hadoop.fs.Path("s3a://models/" + prefix
                + "/model.safetensors.index.json"))) {
            Files.copy(index, out);
        }
        return "s3a://models/" + prefix + "/model.safetensors.index.json";
    }

    /** The digest of the local files' slices under {@code selection}. */
    private static long expectedDigest(Checkpoint c, TensorSelection selection) throws IOException {
        long digest = 0;
        for (Path p : c.local()) {
            try (var f = io.github.semyonsinchenko.safetensors.io.SafetensorsFile.open(p)) {
                for (var t : f) {
                    if (selection.selects(t.name())) {
                        var slice = t.slice(selection.sliceOf(t.info()));
                        var bytes = java.lang.foreign.MemorySegment.ofArray(slice.toByteArray());
                        digest += LoadedTensor.digest(t.name(), bytes);
                    }
                }
            }
        }
        return digest;
    }

    /** One load of variant {@code v}; fills {@code run} (when given) with its measurements; returns the digest. */
    private static long load(Configuration conf, Checkpoint c, String[] v, Map<String, Object> run) throws Exception {
        boolean tp = v[1].equals("tp");
        int w = Integer.parseInt(v[2]);
        int r = Integer.parseInt(v[3]);
        TensorSelection selection = tp ? c.tp(w, r).selection() : TensorSelection.all();
        long gap = Long.parseLong(v[4]);
        int threads = Integer.parseInt(v[5]);
        LoaderConfig config = LoaderConfig.builder().hadoopConf(conf).metadataCache(new MetadataCache(0))
                .gapBytes(gap).workerThreads(threads).build();
        double cpu0 = LoaderBench.cpuSeconds(ProcessHandle.current());
        long t0 = System.nanoTime();
        long digest = 0;
        LoadStats stats;
        try (SafetensorsLoader loader = SafetensorsLoader.open(config, selection, List.of(c.uri()))) {
            LoadedTensor t;
            while ((t = loader.next()) != null) {
                try (LoadedTensor closing = t) {
                    digest += run == null ? closing.digest() : 0;
                }
            }
            stats = loader.stats();
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        if (run != null) {
            long share = stats.bytesHandedOut();
            run.put("checkpoint", c.name());
            run.put("how", tp ? "tensor parallel" : "whole tensors");
            run.put("world", w);
            run.put("rank", r);
            run.put("gap_bytes", gap);
            run.put("worker_threads", threads);
            run.put("seconds", secs);
            run.put("read_bytes", stats.dataBytes());
            run.put("header_bytes", stats.headerBytes());
            run.put("share_bytes", share);
            run.put("ratio", (double) stats.dataBytes() / share);
            run.put("requests", stats.requests());
            run.put("client_cpu_s", LoaderBench.cpuSeconds(ProcessHandle.current()) - cpu0);
        }
        return digest;
    }

    private static String loadAverage() throws IOException {
        String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
        return f[0] + " " + f[1] + " " + f[2];
    }
}
