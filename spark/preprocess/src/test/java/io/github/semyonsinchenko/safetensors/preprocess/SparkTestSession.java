package io.github.semyonsinchenko.safetensors.preprocess;

import org.apache.spark.sql.SparkSession;

/** One local[2] session per test JVM (Spark allows one active context). */
public final class SparkTestSession {
    private SparkTestSession() {}

    private static SparkSession session;

    public static synchronized SparkSession get() {
        if (session == null) {
            session = SparkSession.builder().master("local[2]").appName("preprocess-tests")
                    .config("spark.ui.enabled", "false")
                    .config("spark.sql.shuffle.partitions", "4")
                    .config("spark.driver.host", "127.0.0.1")
                    .getOrCreate();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> session.stop()));
        }
        return session;
    }
}
