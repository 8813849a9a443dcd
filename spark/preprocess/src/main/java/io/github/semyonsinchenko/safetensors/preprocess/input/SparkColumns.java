package io.github.semyonsinchenko.safetensors.preprocess.input;

import static org.apache.spark.sql.functions.call_function;
import static org.apache.spark.sql.functions.lit;

import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The value casts headwater does with Arrow, as Spark column expressions. Where Spark cannot
 * reproduce Arrow's cast for a source type, the column is refused with a message naming it rather
 * than read differently.
 */
public final class SparkColumns {
    private SparkColumns() {}

    /** True if {@code s} has a field named exactly {@code name}. */
    public static boolean hasField(StructType s, String name) {
        return Arrays.asList(s.fieldNames()).contains(name);
    }

    static boolean isIntegral(DataType t) {
        return t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType || t instanceof LongType;
    }

    static boolean isNumeric(DataType t) {
        return isIntegral(t) || t instanceof FloatType || t instanceof DoubleType || t instanceof DecimalType;
    }

    static PreprocessException unsupported(String where, SemanticType stype, DataType t) {
        return new PreprocessException(String.format(Locale.ROOT,
                "%s: a %s column cannot be read from Parquet type %s (Spark's cast would differ from headwater's"
                        + " Arrow cast)", where, stype.jsonName(), t.simpleString()));
    }

    /** Epoch microseconds (bigint): timestamps keep their UTC instant (NTZ: the wall clock as UTC), integers are µs. */
    public static Column micros(Column src, DataType t, String where) {
        if (t instanceof TimestampNTZType) {
            // Its own microseconds: what unix_micros(CAST(ts AS TIMESTAMP)) gives in the session's UTC,
            // without the java.time conversion that cast makes of every value.
            Expression zero = new Literal(0L, DataTypes.LongType);
            return ExpressionUtils.column(microsSum(ExpressionUtils.expression(src), zero, DataTypes.LongType));
        }
        if (t instanceof TimestampType || t instanceof DateType) {
            return call_function("unix_micros", src.cast(DataTypes.TimestampType));
        }
        if (isIntegral(t)) {
            return src.cast(DataTypes.LongType); // Arrow reads an integer as a count of the target unit
        }
        if (t instanceof StringType) {
            return call_function("unix_micros", src.try_cast(DataTypes.TimestampType));
        }
        if (t instanceof NullType) {
            return lit(null).cast(DataTypes.LongType);
        }
        throw unsupported(where, SemanticType.TIMESTAMP, t);
    }

    /**
     * {@code a + b} on the longs under two expressions, typed {@code type}: the timestamp types and
     * day-time intervals are microseconds underneath. {@code Math.addExact}, so an overflow fails.
     * Spark's own casts and interval arithmetic build java.time objects for every value, even for
     * TIMESTAMP_NTZ, whose microseconds need no time zone.
     */
    public static Expression microsSum(Expression a, Expression b, DataType type) {
        return new StaticInvoke(Math.class, type, "addExact", CollectionConverters.asScala(List.of(a, b)).toList(),
                CollectionConverters.asScala(List.<AbstractDataType>of()).toList(), true, true, true, Option.empty());
    }

    /** The value column of a cell of {@code stype} read from a source of type {@code t}. */
    public static Column value(SemanticType stype, Column src, DataType t, String where) {
        return switch (stype) {
            case NUMERICAL -> {
                if (isNumeric(t) || t instanceof BooleanType || t instanceof StringType || t instanceof NullType) {
                    yield src.try_cast(DataTypes.DoubleType);
                }
                throw unsupported(where, stype, t);
            }
            case TIMESTAMP -> micros(src, t, where);
            case BOOLEAN -> {
                if (isNumeric(t) || t instanceof BooleanType || t instanceof StringType || t instanceof NullType) {
                    yield src.try_cast(DataTypes.BooleanType);
                }
                throw unsupported(where, stype, t);
            }
            case CATEGORICAL, TEXT -> {
                if (isIntegral(t) || t instanceof BooleanType || t instanceof StringType || t instanceof NullType) {
                    yield src.try_cast(DataTypes.StringType);
                }
                // Float, decimal, date and time formatting differ between Arrow and Spark.
                throw unsupported(where, stype, t);
            }
            case IDENTIFIER, IGNORED -> throw new IllegalArgumentException(stype + " has no value column");
        };
    }

    /** A key for PK/FK matching: headwater casts keys to i64 (non-integer keys do not match). */
    public static Column key(Column src, DataType t, String where) {
        if (isIntegral(t) || t instanceof StringType || t instanceof NullType) {
            return src.try_cast(DataTypes.LongType);
        }
        throw new PreprocessException(String.format(Locale.ROOT,
                "%s: a key column cannot be read from Parquet type %s (keys are cast to 64-bit integers)", where,
                t.simpleString()));
    }

    /** A column reference that survives dots and backticks in names. */
    public static Column ref(String name) {
        return org.apache.spark.sql.functions.col("`" + name.replace("`", "``") + "`");
    }
}
