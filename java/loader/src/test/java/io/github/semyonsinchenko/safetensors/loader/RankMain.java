package io.github.semyonsinchenko.safetensors.loader;

import java.io.PrintStream;
import java.lang.foreign.ValueLayout;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.statistics.IOStatisticsSupport;

/**
 * One rank of a multi-process load, run in its own JVM by the tests:
 * {@code RankMain <rank> <world> <out file> <uri> [key=value Hadoop settings...]}. Owner mode
 * (chunks shared out between ranks) writes one line per tensor ({@code name<TAB>sha-256 of its
 * bytes}) and a last line with the S3A request counts. With {@code -Drank.tensorParallel=true} every
 * rank loads its tensor-parallel block of every tensor ({@link TensorParallel}, row-parallel
 * {@code *.o_proj.weight} and {@code *.down_proj.weight}, split biases) and writes what it got as a
 * safetensors file: each tensor under its name, its slice in the metadata under the same name, and
 * the request counts under {@code #gets}, {@code #heads}, {@code #planned} (requests of its chunks
 * plus one per header) and {@code #read} (data bytes).
 */
public final class RankMain {
    private RankMain() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(args[0]);
        int world = Integer.parseInt(args[1]);
        Path out = Path.of(args[2]);
        String uri = args[3];
        Configuration conf = new Configuration();
        for (String kv : Arrays.copyOfRange(args, 4, args.length)) {
            int eq = kv.indexOf('=');
            conf.set(kv.substring(0, eq), kv.substring(eq + 1));
        }
        if (Boolean.getBoolean("rank.tensorParallel")) {
            tensorParallel(rank, world, out, uri, conf);
            return;
        }
        LoaderConfig config = LoaderConfig.builder().hadoopConf(conf).chunkBytes(256 * 1024).rank(rank, world)
                .workerThreads(2).build();
        try (SafetensorsLoader loader = SafetensorsLoader.open(config, uri);
             PrintStream ps = new PrintStream(Files.newOutputStream(out), false, StandardCharsets.UTF_8)) {
            LoadedTensor t;
            while ((t = loader.next()) != null) {
                try (LoadedTensor closing = t) {
                    ps.println(t.name() + "\t" + sha256(t.data().toArray(ValueLayout.JAVA_BYTE)));
                }
            }
            Map<String, Long> c = IOStatisticsSupport.retrieveIOStatistics(FileSystem.get(URI.create(uri), conf))
                    .counters();
            ps.println("#requests\t" + c.getOrDefault("action_http_get_request", -1L) + "\t"
                    + c.getOrDefault("action_http_head_request", -1L) + "\t" + loader.chunksToRead().size() + "\t"
                    + loader.files().size());
        }
    }

    private static void tensorParallel(int rank, int world, Path out, String uri, Configuration conf)
            throws Exception {
        TensorParallel tp = TensorParallel.of(world, rank).rowParallel("*.o_proj.weight", "*.down_proj.weight")
                .splitVectors("*.bias");
        LoaderConfig config = LoaderConfig.builder().hadoopConf(conf).chunkBytes(64 * 1024).workerThreads(2)
                .gapBytes(0).build();
        Map<String, io.github.semyonsinchenko.safetensors.io.Tensor> got = new java.util.LinkedHashMap<>();
        Map<String, String> metadata = new java.util.LinkedHashMap<>();
        try (SafetensorsLoader loader = SafetensorsLoader.open(config, tp.selection(), java.util.List.of(uri));
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            for (Map.Entry<String, LoadedTensor> e : loader.loadAll().entrySet()) {
                try (LoadedTensor t = e.getValue()) {
                    got.put(e.getKey(), t.asTensor().to(t.dtype(), arena));
                    metadata.put(e.getKey(), t.slice().toString());
                }
            }
            Map<String, Long> c = IOStatisticsSupport.retrieveIOStatistics(FileSystem.get(URI.create(uri), conf))
                    .counters();
            long planned = loader.chunksToRead().stream().mapToLong(ch -> ch.ranges().size()).sum()
                    + loader.files().size();
            metadata.put("#gets", Long.toString(c.getOrDefault("action_http_get_request", -1L)));
            metadata.put("#heads", Long.toString(c.getOrDefault("action_http_head_request", -1L)));
            metadata.put("#planned", Long.toString(planned));
            metadata.put("#read", Long.toString(loader.stats().dataBytes()));
            io.github.semyonsinchenko.safetensors.io.Safetensors.saveFile(got, metadata, out);
        }
    }

    static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
    }
}
