package io.github.semyonsinchenko.safetensors.spark.read;

import org.apache.spark.QueryContext;
import org.apache.spark.sql.AnalysisException;
import scala.Option;

/** Exceptions with our own wording, raised while a query is analysed or planned. */
final class Errors {
    private Errors() {}

    /**
     * Throws an {@link AnalysisException} (checked in Java, not in the Scala interfaces that call us).
     * Declared to return an exception so call sites can write {@code throw Errors.analysis(...)}.
     */
    static RuntimeException analysis(String message) {
        return analysis(message, null);
    }

    static RuntimeException analysis(String message, Throwable cause) {
        throw Errors.<RuntimeException>sneaky(new AnalysisException(message, Option.empty(), Option.empty(),
                Option.apply(cause), Option.empty(), scala.collection.immutable.Map$.MODULE$.<String, String>empty(),
                new QueryContext[0]));
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
