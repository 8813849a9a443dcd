import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.loader.LoadStats;
import io.github.semyonsinchenko.safetensors.loader.LoadedTensor;
import io.github.semyonsinchenko.safetensors.loader.LoaderConfig;
import io.github.semyonsinchenko.safetensors.loader.MetadataCache;
import io.github.semyonsinchenko.safetensors.loader.S3ProxyServer;
import io.github.semyonsinchenko.safetensors.loader.SafetensorsLoader;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.statistics.IOStatisticsSupport;

/**
 * The loader benchmark: a checkpoint of mixed-size tensors on s3proxy with a fixed delay per
 * request, loaded through S3A by the chunked loader (one request per chunk, and split into
 * concurrent sub-range requests) and by its legacy one-request-per-tensor path, all in one run.
 * Request counts come from S3A's IOStatistics; every load's digest must equal the local files'.
 * Optionally runs the Python peers (bench/loader/fsspec_peer.py) against the same endpoint.
 *
 * <p>Usage: {@code LoaderBench <work dir> <out json> <total MiB> <tensors> <latency ms> <repeats>
 * [python command...]}; run by bench/loader/run.sh.
 */
public final class LoaderBench {
    static final int SHARDS = 2;

    public static void main(String[] args) throws Exception {
        Path work = Files.createDirectories(Path.of(args[0]));
        Path outJson = Path.of(args[1]);
        long totalBytes = Long.parseLong(args[2]) << 20;
        int tensors = Integer.parseInt(args[3]);
        int latencyMs = Integer.parseInt(args[4]);
        int repeats = Integer.parseInt(args[5]);
        List<String> python = List.of(args).subList(6, args.length);

        // One directory per shape, so a checkpoint written for other arguments is never reused.
        Path local = work.resolve(String.format(Locale.ROOT, "ckpt-%dMiB-%d", totalBytes >> 20, tensors));
        List<Path> shards = writeCheckpoint(local, totalBytes, tensors);
        long localDigest = 0;
        int tensorCount = 0;
        for (Path p : shards) {
            try (var f = io.github.semyonsinchenko.safetensors.io.SafetensorsFile.open(p)) {
                for (var t : f) {
                    localDigest += LoadedTensor.digest(t.name(), t.data());
                    tensorCount++;
                }
            }
        }
        long fileBytes = 0;
        for (Path p : shards) {
            fileBytes += Files.size(p);
        }
        System.out.printf(Locale.ROOT, "checkpoint: %d shards, %d tensors, %.1f MiB%n", shards.size(), tensorCount,
                fileBytes / 1048576.0);

        Map<String, String> latency = new LinkedHashMap<>();
        if (latencyMs > 0) {
            latency.put("s3proxy.latency-blobstore", "true");
            latency.put("s3proxy.latency-blobstore.*.latency", Integer.toString(latencyMs));
        }
        Path s3dir = work.resolve("s3");
        deleteTree(s3dir);
        Map<String, Object> result = new LinkedHashMap<>();
        try (S3ProxyServer s3 = S3ProxyServer.start(s3dir, List.of("models"), latency)) {
            Configuration conf = s3.s3aConf();
            FileSystem fs = FileSystem.get(URI.create("s3a://models/"), conf);
            for (Path p : shards) {
                try (var out = fs.create(new org.apache.hadoop.fs.Path("s3a://models/ckpt/" + p.getFileName()))) {
                    Files.copy(p, out);
                }
            }
            try (var out = fs.create(new org.apache.hadoop.fs.Path("s3a://models/ckpt/model.safetensors.index.json"))) {
                Files.copy(local.resolve("model.safetensors.index.json"), out);
            }
            String uri = "s3a://models/ckpt/model.safetensors.index.json";

            Map<String, LoaderConfig.Builder> variants = new LinkedHashMap<>();
            // The defaults split chunks into 64 MiB requests on object stores; the others show why.
            variants.put("chunked", LoaderConfig.builder());
            variants.put("chunked, one request per chunk", LoaderConfig.builder().requestBytes(Integer.MAX_VALUE));
            variants.put("chunked, 16 MiB requests", LoaderConfig.builder().requestBytes(16 << 20));
            variants.put("chunked, 32 MiB requests", LoaderConfig.builder().requestBytes(32 << 20));
            variants.put("chunked, 256 MiB requests", LoaderConfig.builder().requestBytes(256 << 20));
            variants.put("chunked, huge pages", LoaderConfig.builder().hugePages(true));
            variants.put("legacy (per tensor)", LoaderConfig.builder().legacy(true));
            // -Dbench.only="name;name" runs a subset (comparing a few variants with more repeats).
            String only = System.getProperty("bench.only", "");
            if (!only.isBlank()) {
                List<String> keep = List.of(only.split(";"));
                variants.keySet().retainAll(keep);
                if (variants.size() != keep.size()) {
                    throw new IllegalArgumentException("unknown variant in -Dbench.only=" + only);
                }
            }
            // Untimed warm-up (class loading, JIT of both JVMs, S3A's pools): two chunked loads of the
            // whole checkpoint with its digest. With one load of one shard the first timed load still
            // took twice the median (s3proxy spent twice the CPU on it), always on the same variant.
            for (int w = 0; w < 2; w++) {
                try (SafetensorsLoader warmUp = SafetensorsLoader.open(LoaderConfig.builder().hadoopConf(conf)
                        .metadataCache(new MetadataCache(0)).build(), uri)) {
                    for (LoadedTensor t : warmUp) {
                        try (t) {
                            t.digest();
                        }
                    }
                }
            }
            List<Map<String, Object>> runs = new ArrayList<>();
            System.out.printf(Locale.ROOT, "%-32s %3s %8s %8s %6s %9s %8s%n", "variant", "rep", "GETs", "HEADs",
                    "LISTs", "seconds", "MB/s");
            List<Map.Entry<String, LoaderConfig.Builder>> order = new ArrayList<>(variants.entrySet());
            for (int rep = 1; rep <= repeats; rep++) {
                // Each repeat starts with another variant, so a slow first load (allocation, GC after
                // the previous repeat, a neighbour's burst) does not always land on the same one.
                List<Map.Entry<String, LoaderConfig.Builder>> turn = new ArrayList<>(order);
                java.util.Collections.rotate(turn, -(rep - 1));
                for (var v : turn) {
                    LoaderConfig config = v.getValue().hadoopConf(conf).metadataCache(new MetadataCache(0)).build();
                    Map<String, Long> before = counters(fs);
                    double clientCpu0 = cpuSeconds(ProcessHandle.current());
                    double serverCpu0 = s3.cpuSeconds();
                    long t0 = System.nanoTime();
                    long digest = 0;
                    int count = 0;
                    LoadStats stats;
                    try (SafetensorsLoader loader = SafetensorsLoader.open(config, uri)) {
                        LoadedTensor t;
                        while ((t = loader.next()) != null) {
                            try (LoadedTensor closing = t) {
                                digest += closing.digest();
                                count++;
                            }
                        }
                        stats = loader.stats();
                    }
                    double secs = (System.nanoTime() - t0) / 1e9;
                    double clientCpu = cpuSeconds(ProcessHandle.current()) - clientCpu0;
                    double serverCpu = s3.cpuSeconds() - serverCpu0;
                    Map<String, Long> after = counters(fs);
                    if (digest != localDigest || count != tensorCount) {
                        throw new IllegalStateException(v.getKey() + ": loaded " + count + " tensors with digest "
                                + Long.toHexString(digest) + ", expected " + tensorCount + " / "
                                + Long.toHexString(localDigest));
                    }
                    long gets = delta(before, after, "action_http_get_request");
                    long heads = delta(before, after, "action_http_head_request");
                    long lists = delta(before, after, "object_list_request");
                    Map<String, Object> run = new LinkedHashMap<>();
                    run.put("variant", v.getKey());
                    run.put("rep", rep);
                    run.put("gets", gets);
                    run.put("heads", heads);
                    run.put("lists", lists);
                    run.put("seconds", secs);
                    run.put("bytes", stats.dataBytes() + stats.headerBytes());
                    run.put("mb_per_s", stats.dataBytes() / 1e6 / secs);
                    // Where the time goes: CPU seconds of this JVM (S3A client, copies) and of s3proxy.
                    run.put("client_cpu_s", clientCpu);
                    run.put("server_cpu_s", serverCpu);
                    runs.add(run);
                    System.out.printf(Locale.ROOT, "%-32s %3d %8d %8d %6d %9.2f %8.1f  cpu client %.2f s, s3proxy %.2f s%n",
                            v.getKey(), rep, gets, heads, lists, secs, stats.dataBytes() / 1e6 / secs, clientCpu,
                            serverCpu);
                }
            }
            result.put("java_runs", runs);
            if (!python.isEmpty()) {
                List<String> cmd = new ArrayList<>(python);
                cmd.addAll(List.of("--endpoint", "http://127.0.0.1:" + s3.port(), "--key", S3ProxyServer.ACCESS_KEY,
                        "--secret", S3ProxyServer.SECRET_KEY, "--bucket", "models", "--prefix", "ckpt",
                        "--repeats", Integer.toString(repeats), "--local", local.toString()));
                for (Path p : shards) {
                    cmd.add(p.getFileName().toString());
                }
                Path pyOut = work.resolve("python.json");
                cmd.addAll(List.of("--out", pyOut.toString()));
                Process p = new ProcessBuilder(cmd).inheritIO().start();
                if (p.waitFor() != 0) {
                    throw new IllegalStateException("the Python peer failed: " + cmd);
                }
                result.put("python_runs", Files.readString(pyOut));
            }
            fs.close();
        }
        Map<String, Object> setup = new LinkedHashMap<>();
        setup.put("tensors", tensorCount);
        setup.put("shards", shards.size());
        setup.put("file_bytes", fileBytes);
        setup.put("latency_ms", latencyMs);
        setup.put("repeats", repeats);
        setup.put("cores", Runtime.getRuntime().availableProcessors());
        setup.put("jdk", Runtime.version().toString());
        result.put("setup", setup);
        Files.writeString(outJson, toJson(result));
        deleteTree(s3dir);
    }

    /** Two shards of {@code tensors} tensors: 60% small, 30% medium, 10% large, filling {@code total} bytes. */
    static List<Path> writeCheckpoint(Path dir, long total, int tensors) throws IOException {
        Files.createDirectories(dir);
        long[] sizes = new long[tensors];
        SplittableRandom rnd = new SplittableRandom(42);
        long used = 0;
        int large = 0;
        for (int i = 0; i < tensors; i++) {
            int kind = i % 10;
            if (kind < 6) {
                sizes[i] = 4096L * (1 + rnd.nextInt(16));            // 4-64 KiB: norms, biases
            } else if (kind < 9) {
                sizes[i] = 65536L * (4 + rnd.nextInt(28));           // 256 KiB - 2 MiB
            } else {
                large++;
                continue;
            }
            used += sizes[i];
        }
        long each = Math.max(4096, ((total - used) / large) & ~4095L);
        for (int i = 9; i < tensors; i += 10) {
            sizes[i] = each;
        }
        List<Path> out = new ArrayList<>();
        StringBuilder index = new StringBuilder("{\"metadata\": {}, \"weight_map\": {");
        boolean firstEntry = true;
        for (int s = 0; s < SHARDS; s++) {
            String name = String.format(Locale.ROOT, "model-%05d-of-%05d.safetensors", s + 1, SHARDS);
            Path file = dir.resolve(name);
            out.add(file);
            SafetensorsWriter w = new SafetensorsWriter().metadata("format", "pt");
            for (int i = s; i < tensors; i += SHARDS) {
                String tensor = String.format(Locale.ROOT, "model.layers.%d.w%d", i / 10, i % 10);
                Dtype d = i % 3 == 0 ? Dtype.F32 : Dtype.BF16;
                long bytes = sizes[i];
                long seed = i;
                w.add(tensor, d, new long[] {bytes / d.byteSize()}, channel -> fill(channel, bytes, seed));
                index.append(firstEntry ? "" : ", ").append('"').append(tensor).append("\": \"").append(name).append('"');
                firstEntry = false;
            }
            if (!Files.exists(file)) {
                w.write(file);
            }
        }
        Files.writeString(dir.resolve("model.safetensors.index.json"), index.append("}}").toString());
        return out;
    }

    static void fill(java.nio.channels.WritableByteChannel channel, long bytes, long seed) throws IOException {
        SplittableRandom r = new SplittableRandom(seed);
        ByteBuffer buf = ByteBuffer.allocate(1 << 20).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        long left = bytes;
        while (left > 0) {
            buf.clear();
            int n = (int) Math.min(buf.capacity(), left);
            for (int i = 0; i < n; i += 8) {
                buf.putLong(r.nextLong());
            }
            buf.position(0).limit(n);
            while (buf.hasRemaining()) {
                channel.write(buf);
            }
            left -= n;
        }
    }

    static double cpuSeconds(ProcessHandle p) {
        return p.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(Double.NaN);
    }

    static Map<String, Long> counters(FileSystem fs) {
        return new HashMap<>(IOStatisticsSupport.retrieveIOStatistics(fs).counters());
    }

    static long delta(Map<String, Long> before, Map<String, Long> after, String key) {
        return after.getOrDefault(key, 0L) - before.getOrDefault(key, 0L);
    }

    static void deleteTree(Path p) throws IOException {
        if (Files.exists(p)) {
            try (var walk = Files.walk(p)) {
                for (Path q : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(q);
                }
            }
        }
    }

    /** Minimal JSON for maps, lists, numbers and strings (a Python peer's JSON is embedded raw). */
    static String toJson(Object o) {
        if (o instanceof Map<?, ?> m) {
            StringBuilder sb = new StringBuilder("{");
            m.forEach((k, v) -> sb.append(sb.length() > 1 ? ", " : "").append('"').append(k).append("\": ")
                    .append(k.equals("python_runs") ? v : toJson(v)));
            return sb.append('}').toString();
        }
        if (o instanceof List<?> l) {
            StringBuilder sb = new StringBuilder("[");
            for (Object v : l) {
                sb.append(sb.length() > 1 ? ",\n  " : "").append(toJson(v));
            }
            return sb.append(']').toString();
        }
        if (o instanceof String s) {
            return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
        }
        if (o instanceof Double d) {
            return String.format(Locale.ROOT, "%.4f", d);
        }
        return String.valueOf(o);
    }
}
