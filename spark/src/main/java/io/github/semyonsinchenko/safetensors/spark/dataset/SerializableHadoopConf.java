package io.github.semyonsinchenko.safetensors.spark.dataset;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serial;
import java.io.Serializable;
import org.apache.hadoop.conf.Configuration;

/**
 * A Hadoop {@link Configuration} that can travel to executors (broadcast once per job, as Spark's
 * own file sources do). Executors get the driver's file-system settings without a SparkSession.
 */
public final class SerializableHadoopConf implements Serializable {
    @Serial
    private static final long serialVersionUID = 1L;

    private transient Configuration conf;

    public SerializableHadoopConf(Configuration conf) {
        this.conf = conf;
    }

    public Configuration get() {
        return conf;
    }

    @Serial
    private void writeObject(ObjectOutputStream out) throws IOException {
        out.defaultWriteObject();
        conf.write(out);
    }

    @Serial
    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        conf = new Configuration(false);
        conf.readFields(in);
    }
}
