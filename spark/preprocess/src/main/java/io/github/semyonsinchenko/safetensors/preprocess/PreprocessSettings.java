package io.github.semyonsinchenko.safetensors.preprocess;

import io.github.semyonsinchenko.safetensors.options.OptionException;
import io.github.semyonsinchenko.safetensors.options.Options;
import io.github.semyonsinchenko.safetensors.preprocess.keys.PrimaryKeyMaps;
import io.github.semyonsinchenko.safetensors.preprocess.stats.ColumnStatistics;
import io.github.semyonsinchenko.safetensors.preprocess.text.TextVocabulary;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The preprocessor's own session settings, {@code spark.safetensors.preprocess.*}, read through
 * core's option parser ({@link Options}): a setting under that prefix that no stage reads is
 * refused, naming the closest one, and each value is a whole number in its range. Their one
 * exception is {@link PreprocessException}, carrying the parser's message. Each stage documents
 * the settings it reads; Spark's own settings are read through Spark's typed getters.
 */
public final class PreprocessSettings {
    /** The prefix of the preprocessor's settings. */
    public static final String PREFIX = "spark.safetensors.preprocess.";
    /** Every setting a stage reads. */
    static final Set<String> NAMES = Set.of(TextVocabulary.BROADCAST_CELLS_CONF, ColumnStatistics.DRIVER_VALUES_CONF,
            PrimaryKeyMaps.BROADCAST_LIMIT_CONF, PrimaryKeyMaps.ANCHOR_BYTES_CONF);

    private final Options options;

    private PreprocessSettings(Options options) {
        this.options = options;
    }

    /**
     * The session's settings under {@link #PREFIX}, as they are now.
     *
     * @param spark the session
     * @return the settings
     * @throws PreprocessException for a setting no stage reads, naming the closest one
     */
    public static PreprocessSettings of(SparkSession spark) {
        Map<String, String> given = new HashMap<>();
        CollectionConverters.asJava(spark.conf().getAll()).forEach((name, value) -> {
            if (name.startsWith(PREFIX)) {
                given.put(name, value);
            }
        });
        try {
            return new PreprocessSettings(Options.of("preprocessor session", given).requireKnown(NAMES, name -> false));
        } catch (OptionException e) {
            throw new PreprocessException(e.getMessage(), e);
        }
    }

    /**
     * {@return whether {@code name} is set}
     *
     * @param name the setting
     */
    public boolean has(String name) {
        return options.has(name);
    }

    /**
     * Setting {@code name}: a whole number of at least {@code min}, or {@code dflt} when unset.
     *
     * @param name the setting
     * @param dflt its default
     * @param min the smallest allowed
     * @param what what it counts, for messages (e.g. "rows")
     * @return the value
     * @throws PreprocessException for any other value, naming the setting, the value and what is allowed
     */
    public long count(String name, long dflt, long min, String what) {
        try {
            return options.longValue(name, dflt, min, Long.MAX_VALUE, what);
        } catch (OptionException e) {
            throw new PreprocessException(e.getMessage(), e);
        }
    }
}
