package io.github.semyonsinchenko.safetensors.preprocess;

import io.github.semyonsinchenko.safetensors.preprocess.input.SyntheticInput;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code generate --data-dir D --dataset X --rows N}: the project's synthetic dataset as the preprocessor's
 * input ({@link SyntheticInput}); {@code safetensors sampler generate} writes the same data as a database.
 */
@Command(name = "generate", mixinStandardHelpOptions = true,
        description = "Write a synthetic relational dataset (Parquet + schema JSON) in headwater's input layout.")
public final class GenerateMain implements Callable<Integer> {

    @Option(names = "--data-dir", required = true, description = "Writes metadata/<dataset>.json and raw/<dataset>/.")
    Path dataDir;

    @Option(names = "--dataset", required = true)
    String dataset;

    @Option(names = "--rows", description = "About this many rows in all (default: ${DEFAULT-VALUE}).")
    int rows = 100_000;

    @Option(names = "--seed", description = "Seed of the values (default: ${DEFAULT-VALUE}).")
    long seed = 42;

    @Option(names = "--files", description = "Parquet files per table (default: ${DEFAULT-VALUE}).")
    int files = 1;

    @Option(names = "--master", description = "Spark master when not set by spark-submit (default: local[*]).")
    String master;

    @Override
    public Integer call() {
        SparkSession spark = PreprocessMain.sessionBuilder("safetensors generate " + dataset, master, new SparkConf())
                .getOrCreate();
        try {
            SyntheticData data = SyntheticInput.write(spark, dataDir, dataset, rows, seed, files);
            StringBuilder tables = new StringBuilder();
            int total = 0;
            for (SyntheticData.Table t : data.tables()) {
                tables.append(tables.isEmpty() ? "" : ", ").append(t.name()).append(' ').append(t.rows());
                total += t.rows();
            }
            System.err.printf(Locale.ROOT, "wrote %s: %s (%d rows)%n", dataDir.resolve("raw").resolve(dataset), tables,
                    total);
            return 0;
        } finally {
            spark.stop();
        }
    }

    /** Runs the command and exits with its status. */
    public static void main(String[] args) {
        System.exit(new CommandLine(new GenerateMain()).execute(args));
    }
}
