package io.github.semyonsinchenko.safetensors;

import io.github.semyonsinchenko.safetensors.spark.entry.EntryCheck;
import org.apache.spark.sql.SparkSessionExtensions;
import scala.Function1;
import scala.runtime.BoxedUnit;

/**
 * Registers the tensor functions {@code arr_to_st}, {@code st_to_array} and {@code st_convert} in
 * every session started with
 * {@code spark.sql.extensions=io.github.semyonsinchenko.safetensors.SafetensorsExtensions}.
 *
 * <p>Compiled for Java 17 (Spark 4's floor): on an older Java than 25 the session fails to start
 * with one line naming the Java found and the fix, instead of an {@code UnsupportedClassVersionError}.
 */
public final class SafetensorsExtensions implements Function1<SparkSessionExtensions, BoxedUnit> {
    private static final String IMPLEMENTATION = "io.github.semyonsinchenko.safetensors.spark.functions.FunctionRegistration";

    /** Created by Spark from {@code spark.sql.extensions}. */
    public SafetensorsExtensions() {}

    @Override
    @SuppressWarnings("unchecked")
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        return ((Function1<SparkSessionExtensions, BoxedUnit>) EntryCheck.driverSide(IMPLEMENTATION, Function1.class))
                .apply(extensions);
    }
}
