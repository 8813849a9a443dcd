package io.github.semyonsinchenko.safetensors.spark.tensor;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * The Spark element types a numeric array may hold, for the writer's array columns and for
 * {@code arr_to_st} alike, each with the dtype it is stored as when no {@code dtype} is given.
 */
public enum ElementType {
    /** {@code tinyint}, stored as I8. */
    BYTE(DataTypes.ByteType, Dtype.I8),
    /** {@code smallint}, stored as I16. */
    SHORT(DataTypes.ShortType, Dtype.I16),
    /** {@code int}, stored as I32. */
    INT(DataTypes.IntegerType, Dtype.I32),
    /** {@code bigint}, stored as I64. */
    LONG(DataTypes.LongType, Dtype.I64),
    /** {@code float}, stored as F32. */
    FLOAT(DataTypes.FloatType, Dtype.F32),
    /** {@code double}, stored as F64. */
    DOUBLE(DataTypes.DoubleType, Dtype.F64);

    /** The Spark type of the array's elements. */
    public final DataType sparkType;
    /** The dtype holding the values exactly, with the same bytes as Spark's array elements. */
    public final Dtype natural;
    /**
     * Whether the elements are floating point: such arrays go only to float dtypes, never truncated to
     * integers.
     */
    public final boolean floating;

    ElementType(DataType sparkType, Dtype natural) {
        this.sparkType = sparkType;
        this.natural = natural;
        this.floating = natural == Dtype.F32 || natural == Dtype.F64;
    }

    /**
     * The element type of arrays of {@code t}.
     *
     * @param t an array's element type
     * @return the element type, or null when arrays of {@code t} are not numeric tensors
     */
    public static ElementType of(DataType t) {
        for (ElementType e : values()) {
            if (e.sparkType.equals(t)) {
                return e;
            }
        }
        return null;
    }
}
