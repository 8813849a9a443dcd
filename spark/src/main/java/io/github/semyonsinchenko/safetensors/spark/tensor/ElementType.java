package io.github.semyonsinchenko.safetensors.spark.tensor;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * The Spark element types a numeric array may hold, for the writer's array columns and for
 * {@code arr_to_st} alike, each with the dtype it is stored as when no {@code dtype} is given.
 */
public enum ElementType {
    BYTE(DataTypes.ByteType, Dtype.I8),
    SHORT(DataTypes.ShortType, Dtype.I16),
    INT(DataTypes.IntegerType, Dtype.I32),
    LONG(DataTypes.LongType, Dtype.I64),
    FLOAT(DataTypes.FloatType, Dtype.F32),
    DOUBLE(DataTypes.DoubleType, Dtype.F64);

    public final DataType sparkType;
    /** The dtype holding the values exactly, with the same bytes as Spark's array elements. */
    public final Dtype natural;
    public final boolean floating;

    ElementType(DataType sparkType, Dtype natural) {
        this.sparkType = sparkType;
        this.natural = natural;
        this.floating = natural == Dtype.F32 || natural == Dtype.F64;
    }

    /** The element type of {@code t}, or null when arrays of it are not numeric tensors. */
    public static ElementType of(DataType t) {
        for (ElementType e : values()) {
            if (e.sparkType.equals(t)) {
                return e;
            }
        }
        return null;
    }
}
