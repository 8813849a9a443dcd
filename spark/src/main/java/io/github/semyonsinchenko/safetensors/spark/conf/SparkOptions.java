package io.github.semyonsinchenko.safetensors.spark.conf;

import io.github.semyonsinchenko.safetensors.options.OptionException;
import io.github.semyonsinchenko.safetensors.options.Options;
import java.util.Map;
import java.util.Set;

/**
 * The options of a {@code format("safetensors")} read or write, read by core's strict
 * {@link Options}. Names with a dot ({@code fs.s3a.endpoint}, {@code parquet.*}) are Hadoop or Spark
 * settings that reach the Hadoop configuration, and names starting with {@code __} are Spark's own
 * ({@code __partition_columns}); both pass. The read and the write turn an
 * {@link OptionException} into an {@code AnalysisException} before any task runs.
 */
public final class SparkOptions {
    private SparkOptions() {}

    /**
     * The options, with every name checked against {@code known}.
     *
     * @param surface "safetensors read" or "safetensors write", for messages
     * @param options the options as Spark passes them (names in any case)
     * @param known every option the surface reads
     * @return the options, to read typed values from
     * @throws OptionException for a name no one reads
     */
    public static Options of(String surface, Map<String, String> options, Set<String> known) {
        return Options.of(surface, options).requireKnown(known, name -> name.contains(".") || name.startsWith("__"));
    }
}
