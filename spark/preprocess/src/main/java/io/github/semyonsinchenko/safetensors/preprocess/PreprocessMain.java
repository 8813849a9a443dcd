package io.github.semyonsinchenko.safetensors.preprocess;

import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import java.net.URI;
import java.nio.file.Path;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code preprocess --data-dir D --dataset X [--skip-embeddings] [--embedder none|http|hashed]
 * [--master local[*]]}: headwater's preprocessor options; reads {@code D/metadata/X.json} and
 * {@code D/raw/X/}, writes {@code D/processed/X/}. Also the spark-submit main class.
 */
@Command(name = "preprocess", mixinStandardHelpOptions = true,
        description = "Build a relational-sampler database (headwater's format) from a schema JSON and Parquet tables.")
public final class PreprocessMain implements Callable<Integer> {
    /** Progress lines' clock; always with seconds (LocalTime's own form drops ":00"). */
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss", Locale.ROOT);

    @Option(names = "--data-dir", required = true, description = "Holds metadata/<dataset>.json, raw/<dataset>/; output goes to processed/<dataset>/.")
    Path dataDir;

    @Option(names = "--dataset", required = true, description = "Dataset name.")
    String dataset;

    @Option(names = "--skip-embeddings", description = "Zero vectors instead of embeddings (same as --embedder none).")
    boolean skipEmbeddings;

    @Option(names = "--embedder", description = "none, http (default; BASETEN_EMBEDDER_URL and BASETEN_API_KEY) or hashed (offline).")
    String embedder = "http";

    @Option(names = "--embedder-url", description = "Endpoint for --embedder http (default: $BASETEN_EMBEDDER_URL).")
    URI embedderUrl;

    @Option(names = "--batch-size", description = "Strings per embedding request (default: ${DEFAULT-VALUE}).")
    int batchSize = EmbedderSpec.DEFAULT_BATCH_SIZE;

    @Option(names = "--master", description = "Spark master when not set by spark-submit (default: local[*]).")
    String master;

    @Option(names = "--rows-per-partition", description = "Rows per Spark partition in ordered stages (default: ${DEFAULT-VALUE}).")
    long rowsPerPartition = 500_000;

    EmbedderSpec embedderSpec() {
        EmbedderSpec.Kind kind = skipEmbeddings ? EmbedderSpec.Kind.NONE : EmbedderSpec.parseKind(embedder);
        EmbedderSpec spec = switch (kind) {
            case NONE -> EmbedderSpec.none();
            case HASHED -> EmbedderSpec.hashed();
            case HTTP -> {
                URI url = embedderUrl;
                if (url == null) {
                    String env = System.getenv("BASETEN_EMBEDDER_URL");
                    if (env == null || env.isBlank()) {
                        throw new CommandLine.ParameterException(new CommandLine(this), "--embedder http needs"
                                + " --embedder-url or BASETEN_EMBEDDER_URL (or use --skip-embeddings / --embedder hashed)");
                    }
                    url = URI.create(env);
                }
                yield EmbedderSpec.http(url, System.getenv("BASETEN_API_KEY"));
            }
        };
        return spec.withBatchSize(batchSize);
    }

    /**
     * Both mains' session builder: the master from {@code --master}, else {@code conf}'s
     * (spark-submit's), else {@code local[*]}. The classic (in-process) builder directly:
     * {@code SparkSession.builder()} looks its implementation up through Scala reflection, and
     * starting Scala's runtime universe cost ~0.6 s of every run.
     */
    static org.apache.spark.sql.classic.SparkSession.Builder sessionBuilder(String appName, String master,
            SparkConf conf) {
        org.apache.spark.sql.classic.SparkSession.Builder builder =
                org.apache.spark.sql.classic.SparkSession.builder().appName(appName);
        if (master != null) {
            builder.master(master);
        } else if (!conf.contains("spark.master")) {
            builder.master("local[*]");
        }
        return builder;
    }

    /** Settings for the session unless {@code conf} (spark-submit's, system properties) has them. */
    static Map<String, String> sessionDefaults(SparkConf conf) {
        Map<String, String> out = new TreeMap<>();
        if (!conf.contains("spark.ui.enabled")) {
            out.put("spark.ui.enabled", "false"); // a batch job nobody watches: no web UI to start and feed
        }
        return out;
    }

    @Override
    public Integer call() {
        EmbedderSpec spec = embedderSpec();
        SparkConf conf = new SparkConf();
        org.apache.spark.sql.classic.SparkSession.Builder builder = sessionBuilder("safetensors preprocess " + dataset,
                master, conf);
        sessionDefaults(conf).forEach(builder::config);
        long start = System.nanoTime();
        SparkSession spark = builder.getOrCreate();
        try {
            Preprocessor.Options options = new Preprocessor.Options(spec, rowsPerPartition, msg -> System.err.println(
                    LocalTime.now().format(CLOCK) + " " + msg));
            DatabaseMetadata m = Preprocessor.run(spark, dataDir, dataset, options);
            System.err.printf(Locale.ROOT, "wrote %s: %d tables, %d rows, %d columns, %d tasks in %.1f s%n",
                    dataDir.resolve("processed").resolve(dataset), m.tables().size(), m.numRows(), m.numColumns(),
                    m.tasks().size(), (System.nanoTime() - start) / 1e9);
            return 0;
        } finally {
            spark.stop();
        }
    }

    /** Runs the command and exits with its status. */
    public static void main(String[] args) {
        CommandLine cli = new CommandLine(new PreprocessMain());
        cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
            if (e instanceof PreprocessException) {
                cmd.getErr().println("error: " + e.getMessage());
                return 2;
            }
            throw e;
        });
        System.exit(cli.execute(args));
    }
}
