package io.github.semyonsinchenko.safetensors.spark.functions;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.spark.tensor.ElementType;
import io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The three SQL functions: their names, arities, argument checks (done at analysis, on the
 * resolved argument types and literal values) and the {@link StaticInvoke} of {@link TensorFunctionEval}
 * each one is replaced with.
 */
public enum TensorFunction {
    /** {@code arr_to_st(array, shape, dtype[, rounding])}: a flat numeric array to a Tensor Struct. */
    ARR_TO_ST("arr_to_st", 3, 4,
            "_FUNC_(array, shape, dtype[, rounding]) - A Tensor Struct of the flat numeric array in dtype "
                    + "(F16, BF16, F32, F64, I8..U64) with the given shape; rounding 'rne' (default) or 'trunc'."),
    /** {@code st_to_array(tensor)}: a Tensor Struct to a flat {@code array<float>}. */
    ST_TO_ARRAY("st_to_array", 1, 1,
            "_FUNC_(tensor) - The Tensor Struct's elements as a flat array<float> (row-major)."),
    /** {@code st_convert(tensor, dtype[, rounding])}: a float Tensor Struct to another float dtype. */
    ST_CONVERT("st_convert", 2, 3,
            "_FUNC_(tensor, dtype[, rounding]) - The float Tensor Struct converted to another float dtype "
                    + "(F16, BF16, F32, F64); rounding 'rne' (default) or 'trunc'.");

    /** Float dtypes: targets of st_convert and of float arrays. */
    static final Set<Dtype> FLOAT_DTYPES = EnumSet.of(Dtype.F16, Dtype.BF16, Dtype.F32, Dtype.F64);
    /** Every dtype arr_to_st writes. */
    static final Set<Dtype> ARRAY_DTYPES = EnumSet.of(Dtype.F16, Dtype.BF16, Dtype.F32, Dtype.F64, Dtype.I8,
            Dtype.U8, Dtype.I16, Dtype.U16, Dtype.I32, Dtype.U32, Dtype.I64, Dtype.U64);

    /** The name SQL calls the function by. */
    public final String sqlName;
    private final int minArgs;
    private final int maxArgs;
    /** The text {@code DESCRIBE FUNCTION} shows ({@code _FUNC_} stands for the name). */
    public final String usage;

    TensorFunction(String sqlName, int minArgs, int maxArgs, String usage) {
        this.sqlName = sqlName;
        this.minArgs = minArgs;
        this.maxArgs = maxArgs;
        this.usage = usage;
    }

    /**
     * The fewest arguments a call takes.
     *
     * @return the minimum arity
     */
    public int minArgs() {
        return minArgs;
    }

    /**
     * The most arguments a call takes (the optional rounding included).
     *
     * @return the maximum arity
     */
    public int maxArgs() {
        return maxArgs;
    }

    /** Null when the resolved arguments are acceptable, else what is wrong. */
    String checkArguments(List<Expression> args) {
        try {
            replacementArguments(args);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    DataType resultType() {
        return this == ST_TO_ARRAY ? DataTypes.createArrayType(DataTypes.FloatType, false) : TensorStruct.TYPE;
    }

    /** The per-row call; the arguments must have passed {@link #checkArguments}. */
    Expression replacement(List<Expression> args) {
        List<Expression> callArgs = replacementArguments(args);
        String method = switch (this) {
            case ARR_TO_ST -> "arrToSt";
            case ST_TO_ARRAY -> "stToArray";
            case ST_CONVERT -> "stConvert";
        };
        return new StaticInvoke(TensorFunctionEval.class, resultType(), method, CollectionConverters.asScala(callArgs).toList(),
                CollectionConverters.<AbstractDataType>asScala(List.of()).toList(), true, false, true, Option.empty());
    }

    /** Checks the arguments and turns the literal ones into the ints/booleans TensorFunctionEval takes. */
    private List<Expression> replacementArguments(List<Expression> args) {
        List<Expression> out = new ArrayList<>();
        switch (this) {
            case ARR_TO_ST -> {
                DataType t = args.get(0).dataType();
                ElementType e = t instanceof ArrayType a ? ElementType.of(a.elementType()) : null;
                if (e == null) {
                    throw fail("the first argument must be an array of float, double, int, bigint, smallint or "
                            + "tinyint, not " + t.simpleString());
                }
                Expression shape = args.get(1);
                DataType s = shape.dataType();
                if (s instanceof ArrayType sa && sa.elementType() == DataTypes.NullType && shape.foldable()) {
                    // array() is array<void>: the scalar shape [] (or nulls, a row error).
                    shape = Literal.create(shape.eval(null), DataTypes.createArrayType(DataTypes.IntegerType));
                } else if (!(s instanceof ArrayType sa && sa.elementType() == DataTypes.IntegerType)) {
                    throw fail("the shape must be array<int>, not " + s.simpleString());
                }
                Dtype dtype = dtype(args.get(2), ARRAY_DTYPES);
                if (e.floating && !FLOAT_DTYPES.contains(dtype)) {
                    throw fail("a " + e.sparkType.simpleString() + " array is never truncated to the integer dtype "
                            + dtype + "; use F16, BF16, F32 or F64");
                }
                out.add(args.get(0));
                out.add(shape);
                out.add(Literal.create(e.ordinal(), DataTypes.IntegerType));
                out.add(Literal.create(dtype.ordinal(), DataTypes.IntegerType));
                out.add(Literal.create(truncate(args, 3), DataTypes.BooleanType));
            }
            case ST_TO_ARRAY -> {
                requireTensor(args.get(0));
                out.add(args.get(0));
            }
            case ST_CONVERT -> {
                requireTensor(args.get(0));
                Dtype dtype = dtype(args.get(1), FLOAT_DTYPES);
                out.add(args.get(0));
                out.add(Literal.create(dtype.ordinal(), DataTypes.IntegerType));
                out.add(Literal.create(truncate(args, 2), DataTypes.BooleanType));
            }
        }
        return out;
    }

    private void requireTensor(Expression e) {
        if (!TensorStruct.is(e.dataType())) {
            throw fail("the argument must be a Tensor Struct struct<data: binary, shape: array<int>, dtype: string>, "
                    + "not " + e.dataType().simpleString());
        }
    }

    private Dtype dtype(Expression e, Set<Dtype> allowed) {
        String name = literalString(e, "dtype");
        Dtype d = Dtype.fromName(name.trim().toUpperCase(Locale.ROOT));
        if (d == null || !allowed.contains(d)) {
            throw fail("dtype '" + name + "' is not supported; allowed: "
                    + allowed.stream().map(Dtype::name).collect(Collectors.joining(", ")));
        }
        return d;
    }

    private boolean truncate(List<Expression> args, int index) {
        if (args.size() <= index) {
            return false;
        }
        String r = literalString(args.get(index), "rounding").trim().toLowerCase(Locale.ROOT);
        return switch (r) {
            case "rne" -> false;
            case "trunc" -> true;
            default -> throw fail("rounding '" + r + "' is not supported; use 'rne' (round to nearest, ties to even) "
                    + "or 'trunc' (toward zero)");
        };
    }

    private String literalString(Expression e, String what) {
        if (!e.foldable() || e.dataType() != DataTypes.StringType) {
            throw fail("the " + what + " must be a string literal, not " + e.sql());
        }
        Object v = e.eval(null);
        if (v == null) {
            throw fail("the " + what + " must not be null");
        }
        return ((UTF8String) v).toString();
    }

    private IllegalArgumentException fail(String message) {
        return new IllegalArgumentException(sqlName + ": " + message);
    }
}
