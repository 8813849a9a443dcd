package io.github.semyonsinchenko.safetensors.spark.dataset;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * {@code vacuum} from the command line, next to Spark rather than in the safetensors CLI: the CLI
 * does not depend on Hadoop, and the Hadoop client this needs (for hdfs://, s3a://, ...) is on
 * every Spark class path. Run it with {@code spark-submit --class} this class and the connector
 * jar, or {@code java -cp "$SPARK_HOME/jars/*:safetensors-spark.jar"}.
 *
 * <pre>
 * vacuum &lt;dataset path&gt; [--apply] [--retain-versions N] [--orphan-age DURATION] [--conf key=value]...
 * </pre>
 * Without {@code --apply} it is a dry run: it lists what it would delete and deletes nothing.
 * Exit status: 0 done, 1 the dataset cannot be vacuumed (e.g. no manifest), 2 bad arguments.
 */
public final class VacuumCommand {
    private VacuumCommand() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        String path = null;
        boolean apply = false;
        Map<String, String> policy = new HashMap<>();
        Configuration conf = new Configuration();
        conf.set("fs.file.impl", RawLocalFileSystem.class.getName()); // no .crc side files
        conf.setBoolean("fs.file.impl.disable.cache", true);
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--apply" -> apply = true;
                    case "--retain-versions" -> policy.put(DatasetCommit.Policy.RETAIN_VERSIONS, value(args, ++i, a));
                    case "--orphan-age" -> policy.put(DatasetCommit.Policy.ORPHAN_AGE, value(args, ++i, a));
                    case "--conf" -> {
                        String kv = value(args, ++i, a);
                        int eq = kv.indexOf('=');
                        if (eq <= 0) {
                            throw new IllegalArgumentException("--conf takes key=value, not " + kv);
                        }
                        conf.set(kv.substring(0, eq), kv.substring(eq + 1));
                    }
                    case "-h", "--help" -> {
                        out.println(usage());
                        return 0;
                    }
                    default -> {
                        if (a.startsWith("-") || path != null) {
                            throw new IllegalArgumentException("unexpected argument " + a);
                        }
                        path = a;
                    }
                }
            }
            if (path == null) {
                throw new IllegalArgumentException("no dataset path given");
            }
            DatasetCommit.Policy p = DatasetCommit.Policy.parse(policy);
            out.print(Vacuum.run(conf, new Path(path), p, !apply));
            if (!apply) {
                out.println("dry run: nothing deleted; add --apply to delete");
            }
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("vacuum: " + e.getMessage());
            err.println(usage());
            return 2;
        } catch (IOException e) {
            err.println("vacuum: " + e.getMessage());
            return 1;
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    static String usage() {
        Duration age = DatasetCommit.Policy.DEFAULT.orphanAge();
        return "usage: vacuum <dataset path> [--apply] [--retain-versions N (default "
                + DatasetCommit.Policy.DEFAULT.retainVersions() + ")] [--orphan-age DURATION (default "
                + age.toHours() + "h)] [--conf hadoopKey=value]...";
    }
}
