package io.github.semyonsinchenko.safetensors.spark.functions;

import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/** The element types {@code arr_to_st} accepts, the same as the writer's numeric arrays. */
enum ElementType {
    BYTE(DataTypes.ByteType, false),
    SHORT(DataTypes.ShortType, false),
    INT(DataTypes.IntegerType, false),
    LONG(DataTypes.LongType, false),
    FLOAT(DataTypes.FloatType, true),
    DOUBLE(DataTypes.DoubleType, true);

    final DataType sparkType;
    final boolean floating;

    ElementType(DataType sparkType, boolean floating) {
        this.sparkType = sparkType;
        this.floating = floating;
    }

    static ElementType of(DataType t) {
        for (ElementType e : values()) {
            if (e.sparkType.equals(t)) {
                return e;
            }
        }
        return null;
    }

    /** Element {@code i} of an integer array, widened to long. */
    long get(ArrayData a, int i) {
        return switch (this) {
            case BYTE -> a.getByte(i);
            case SHORT -> a.getShort(i);
            case INT -> a.getInt(i);
            case LONG -> a.getLong(i);
            default -> throw new IllegalStateException(this + " is not an integer type");
        };
    }
}
