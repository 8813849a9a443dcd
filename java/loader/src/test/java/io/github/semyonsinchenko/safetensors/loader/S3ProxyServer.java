package io.github.semyonsinchenko.safetensors.loader;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;

/**
 * A real S3 endpoint on loopback: s3proxy (filesystem backend) as a child process. Its jar bundles
 * an unshaded AWS SDK, so it never joins the test class path; Maven copies it to the path in the
 * {@code s3proxy.jar} system property. Public for the loader benchmark ({@code bench/loader}).
 */
public final class S3ProxyServer implements AutoCloseable {
    public static final String ACCESS_KEY = "loader-test";
    public static final String SECRET_KEY = "loader-test-secret";

    private final Process process;
    private final int port;
    private final Path log;

    private S3ProxyServer(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /**
     * Starts s3proxy serving {@code buckets} (each a directory under {@code baseDir}).
     *
     * @param extra more s3proxy properties, e.g. {@code s3proxy.latency-blobstore.*.latency}
     */
    public static S3ProxyServer start(Path baseDir, List<String> buckets, Map<String, String> extra) throws Exception {
        String jar = System.getProperty("s3proxy.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalStateException("s3proxy jar not found at " + jar
                    + ": run the test through Maven (the loader module copies it into target/s3proxy)");
        }
        Path data = Files.createDirectories(baseDir.resolve("blobs"));
        for (String b : buckets) {
            Files.createDirectories(data.resolve(b));
        }
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        StringBuilder props = new StringBuilder();
        props.append("s3proxy.endpoint=http://127.0.0.1:").append(port).append('\n')
                .append("s3proxy.authorization=aws-v2-or-v4\n")
                .append("s3proxy.identity=").append(ACCESS_KEY).append('\n')
                .append("s3proxy.credential=").append(SECRET_KEY).append('\n')
                .append("jclouds.provider=filesystem-nio2\n")
                .append("jclouds.filesystem.basedir=").append(data.toAbsolutePath()).append('\n');
        extra.forEach((k, v) -> props.append(k).append('=').append(v).append('\n'));
        Path conf = baseDir.resolve("s3proxy.properties");
        Files.writeString(conf, props);
        Path log = baseDir.resolve("s3proxy.log");
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m", "-XX:+UseSerialGC", "-jar", jar, "--properties", conf.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        S3ProxyServer server = new S3ProxyServer(p, port, log);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            if (!p.isAlive()) {
                throw new IllegalStateException("s3proxy exited with " + p.exitValue() + ":\n" + Files.readString(log));
            }
            try (Socket ignored = new Socket("127.0.0.1", port)) {
                return server;
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline) {
                    server.close();
                    throw new IllegalStateException("s3proxy did not start in 60 s:\n" + Files.readString(log));
                }
                Thread.sleep(100);
            }
        }
    }

    /** CPU seconds the s3proxy process has used so far (for benchmarks: where the time goes). */
    public double cpuSeconds() {
        return process.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(Double.NaN);
    }

    public int port() {
        return port;
    }

    /** The S3A settings that work against it: classic stream (one GET per range), path style, no TLS. */
    public Map<String, String> s3aSettings() {
        return Map.of(
                "fs.s3a.endpoint", "http://127.0.0.1:" + port,
                "fs.s3a.endpoint.region", "us-east-1",
                "fs.s3a.path.style.access", "true",
                "fs.s3a.connection.ssl.enabled", "false",
                "fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
                "fs.s3a.access.key", ACCESS_KEY,
                "fs.s3a.secret.key", SECRET_KEY,
                "fs.s3a.input.stream.type", "classic");
    }

    public Configuration s3aConf() {
        Configuration conf = new Configuration();
        s3aSettings().forEach(conf::set);
        return conf;
    }

    String logTail() throws IOException {
        String all = Files.readString(log);
        return all.length() > 4000 ? all.substring(all.length() - 4000) : all;
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    static String describe(Map<String, Long> counters) {
        StringBuilder sb = new StringBuilder();
        counters.forEach((k, v) -> {
            if (v != 0) {
                sb.append(String.format(Locale.ROOT, "%s=%d ", k, v));
            }
        });
        return sb.toString();
    }
}
