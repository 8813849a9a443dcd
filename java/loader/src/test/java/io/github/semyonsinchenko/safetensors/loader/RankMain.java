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
 * {@code RankMain <rank> <world> <out file> <uri> [key=value Hadoop settings...]}. Writes one line per
 * tensor ({@code name<TAB>sha-256 of its bytes}) and a last line with the S3A request counts.
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

    static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
    }
}
