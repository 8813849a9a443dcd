package io.github.semyonsinchenko.safetensors.spark.write;

import org.apache.spark.QueryContext;
import org.apache.spark.sql.AnalysisException;
import scala.Option;

/** Builds the exceptions of the write path, so every message has the same shape. */
final class WriteErrors {
    private WriteErrors() {}

    /**
     * A plan-time error: what is wrong and what is allowed. Spark's error classes are for Spark's
     * own conditions, so this uses the plain-message constructor (no error class).
     */
    static AnalysisException analysis(String message) {
        return new AnalysisException("[safetensors] " + message, Option.empty(), Option.empty(), Option.empty(),
                Option.empty(), scala.collection.immutable.Map$.MODULE$.empty(), new QueryContext[0]);
    }

    /** A task-time data error, naming the column and the row. */
    static IllegalArgumentException data(String column, String row, String detail) {
        return new IllegalArgumentException("[safetensors] column '" + column + "', " + row + ": " + detail);
    }
}
