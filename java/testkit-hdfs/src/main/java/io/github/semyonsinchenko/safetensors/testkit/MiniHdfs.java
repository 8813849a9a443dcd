package io.github.semyonsinchenko.safetensors.testkit;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real HDFS (Hadoop's MiniDFSCluster, one NameNode and one DataNode on 127.0.0.1) for tests.
 *
 * <p>Hadoop's test cluster needs Jersey 2 and unshaded Hadoop, while the modules under test use
 * the shaded client ({@code hadoop-client-api}) and, for Spark, Jersey 3; so the cluster runs in its
 * own class loader built from the classpath this module writes to {@code target/minidfs.classpath}
 * (system property {@code minidfs.classpath}). This class uses no Hadoop type itself, so a test
 * depends on this jar with every transitive dependency excluded and talks to the cluster only
 * through {@link #uri()}, with its own Hadoop client.
 */
public final class MiniHdfs implements AutoCloseable {
    private final URLClassLoader loader;
    private final Object cluster;
    private final String uri;

    private MiniHdfs(URLClassLoader loader, Object cluster, String uri) {
        this.loader = loader;
        this.cluster = cluster;
        this.uri = uri;
    }

    /** Starts a cluster whose data lives under {@code baseDir}. */
    public static MiniHdfs start(Path baseDir) throws Exception {
        String cpFile = System.getProperty("minidfs.classpath", "hdfs-testkit/target/minidfs.classpath");
        Path cp = Path.of(cpFile);
        if (!Files.isRegularFile(cp)) {
            throw new IllegalStateException("MiniDFSCluster classpath file " + cp.toAbsolutePath() + " is missing: "
                    + "build the spark/hdfs-testkit module first (it is in the reactor before the loader and spark, "
                    + "e.g. mvn -pl java/loader -am verify)");
        }
        List<URL> urls = new ArrayList<>();
        for (String entry : Files.readString(cp).trim().split(java.io.File.pathSeparator)) {
            if (!entry.isBlank()) {
                urls.add(Path.of(entry).toUri().toURL());
            }
        }
        // Parent: the platform loader, so nothing of the test classpath leaks in.
        URLClassLoader loader = new URLClassLoader("minidfs", urls.toArray(URL[]::new),
                ClassLoader.getPlatformClassLoader());
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader); // Hadoop loads plugins through the context loader
        try {
            Class<?> confClass = loader.loadClass("org.apache.hadoop.conf.Configuration");
            Object conf = confClass.getConstructor().newInstance();
            Method set = confClass.getMethod("set", String.class, String.class);
            set.invoke(conf, "hdfs.minidfs.basedir", baseDir.toAbsolutePath().toString());
            set.invoke(conf, "dfs.replication", "1");
            // Loopback only.
            for (String key : List.of("dfs.datanode.address", "dfs.datanode.http.address",
                    "dfs.datanode.ipc.address", "dfs.namenode.http-address", "dfs.namenode.https-address",
                    "dfs.datanode.https.address")) {
                set.invoke(conf, key, "127.0.0.1:0");
            }
            set.invoke(conf, "dfs.namenode.rpc-bind-host", "127.0.0.1");
            Class<?> builderClass = loader.loadClass("org.apache.hadoop.hdfs.MiniDFSCluster$Builder");
            Object builder = builderClass.getConstructor(confClass).newInstance(conf);
            builderClass.getMethod("numDataNodes", int.class).invoke(builder, 1);
            builderClass.getMethod("format", boolean.class).invoke(builder, true);
            Object cluster = builderClass.getMethod("build").invoke(builder);
            cluster.getClass().getMethod("waitActive").invoke(cluster);
            int port = (int) cluster.getClass().getMethod("getNameNodePort").invoke(cluster);
            return new MiniHdfs(loader, cluster, "hdfs://127.0.0.1:" + port);
        } catch (Exception | Error e) {
            loader.close();
            throw e;
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    /** {@code hdfs://127.0.0.1:<port>}. */
    public String uri() {
        return uri;
    }

    @Override
    public void close() throws IOException {
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        Thread.currentThread().setContextClassLoader(loader);
        try {
            cluster.getClass().getMethod("shutdown").invoke(cluster);
        } catch (ReflectiveOperationException e) {
            throw new IOException("MiniDFSCluster shutdown failed", e);
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
            loader.close();
        }
    }
}
