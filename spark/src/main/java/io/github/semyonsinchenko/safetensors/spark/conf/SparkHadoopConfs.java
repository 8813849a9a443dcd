package io.github.semyonsinchenko.safetensors.spark.conf;

import io.github.semyonsinchenko.safetensors.dataset.HadoopConfs;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.SerializableConfiguration;

/**
 * The Spark side of the Hadoop configuration of a read or a write: the session's configuration
 * (with its {@code spark.hadoop.*} and SQL settings) through the dataset module's one recipe
 * ({@link HadoopConfs}), and the one way it reaches executors: broadcast once per scan or write as
 * Spark's own {@link SerializableConfiguration}, as Spark's file sources ship theirs.
 */
public final class SparkHadoopConfs {
    private SparkHadoopConfs() {}

    /**
     * The session's Hadoop configuration plus the read or write options.
     *
     * @param session the active session
     * @param options the read's or write's options
     * @return the configuration
     */
    public static Configuration of(SparkSession session, Map<String, String> options) {
        Configuration base = ((org.apache.spark.sql.classic.SparkSession) session).sessionState().newHadoopConf();
        return HadoopConfs.of(base, options);
    }

    /**
     * Ships {@code conf} to the executors once; tasks read it with {@code value().value()}.
     *
     * @param session the active session
     * @param conf the configuration
     * @return the broadcast
     */
    public static Broadcast<SerializableConfiguration> broadcast(SparkSession session, Configuration conf) {
        return JavaSparkContext.fromSparkContext(session.sparkContext()).broadcast(new SerializableConfiguration(conf));
    }
}
