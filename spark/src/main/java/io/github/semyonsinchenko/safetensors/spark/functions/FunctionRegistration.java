package io.github.semyonsinchenko.safetensors.spark.functions;

import org.apache.spark.QueryContext;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import scala.Function1;
import scala.Option;
import scala.Tuple3;
import scala.collection.immutable.Seq;
import scala.runtime.BoxedUnit;

/**
 * Registers the tensor functions {@code arr_to_st}, {@code st_to_array} and {@code st_convert}.
 * Spark reaches it through {@code io.github.semyonsinchenko.safetensors.SafetensorsExtensions}
 * (the class named in {@code spark.sql.extensions}), which checks the Java version first.
 */
public final class FunctionRegistration implements Function1<SparkSessionExtensions, BoxedUnit> {
    /** Created by reflection from {@code SafetensorsExtensions} once the Java version is checked. */
    public FunctionRegistration() {}

    @Override
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        for (TensorFunction f : TensorFunction.values()) {
            ExpressionInfo info = new ExpressionInfo(TensorExpression.class.getName(), null, f.sqlName, f.usage,
                    "", "", "", "", "", "", "");
            Function1<Seq<Expression>, Expression> builder = args -> build(f, args);
            extensions.injectFunction(new Tuple3<>(FunctionIdentifier.apply(f.sqlName), info, builder));
        }
        return BoxedUnit.UNIT;
    }

    private static Expression build(TensorFunction f, Seq<Expression> args) {
        if (args.size() < f.minArgs() || args.size() > f.maxArgs()) {
            String expected = f.minArgs() == f.maxArgs() ? String.valueOf(f.minArgs())
                    : f.minArgs() + " or " + f.maxArgs();
            throw FunctionRegistration.<RuntimeException>sneaky(new AnalysisException("[safetensors] " + f.sqlName
                    + " takes " + expected + " arguments, got " + args.size(), Option.empty(), Option.empty(),
                    Option.empty(), Option.empty(), scala.collection.immutable.Map$.MODULE$.empty(),
                    new QueryContext[0]));
        }
        return new TensorExpression(f, args);
    }

    /** AnalysisException is checked in Java; Spark expects it unwrapped from the function builder. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E sneaky(Throwable t) throws E {
        throw (E) t;
    }
}
