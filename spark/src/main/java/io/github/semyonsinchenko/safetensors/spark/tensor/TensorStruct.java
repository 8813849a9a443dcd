package io.github.semyonsinchenko.safetensors.spark.tensor;

import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * How a tensor looks in Spark: {@code struct<data: binary, shape: array<int>, dtype: string>}, all
 * non-null. {@code data} holds the raw little-endian bytes exactly as in the file, {@code shape} is
 * {@code []} for a scalar, and {@code dtype} is the safetensors dtype name.
 */
public final class TensorStruct {
    /** The name of the field holding the raw little-endian bytes. */
    public static final String DATA = "data";
    /** The name of the field holding the dimensions ({@code []} for a scalar). */
    public static final String SHAPE = "shape";
    /** The name of the field holding the safetensors dtype name. */
    public static final String DTYPE = "dtype";

    /** The position of {@link #DATA} in the struct. */
    public static final int DATA_ORDINAL = 0;
    /** The position of {@link #SHAPE} in the struct. */
    public static final int SHAPE_ORDINAL = 1;
    /** The position of {@link #DTYPE} in the struct. */
    public static final int DTYPE_ORDINAL = 2;

    /** The struct type; the struct itself may be null (a key absent from a file) where the schema says so. */
    public static final StructType TYPE = new StructType(new StructField[] {
        DataTypes.createStructField(DATA, DataTypes.BinaryType, false),
        DataTypes.createStructField(SHAPE, DataTypes.createArrayType(DataTypes.IntegerType, false), false),
        DataTypes.createStructField(DTYPE, DataTypes.StringType, false),
    });

    private TensorStruct() {}

    /**
     * Whether {@code type} is the Tensor Struct (field names, types and order; nullability ignored).
     *
     * @param type a Spark type
     * @return true if values of {@code type} can be read as tensors
     */
    public static boolean is(DataType type) {
        if (!(type instanceof StructType s) || s.fields().length != 3) {
            return false;
        }
        StructField[] f = s.fields();
        return f[0].name().equals(DATA) && f[0].dataType() == DataTypes.BinaryType
                && f[1].name().equals(SHAPE) && f[1].dataType() instanceof org.apache.spark.sql.types.ArrayType a
                && a.elementType() == DataTypes.IntegerType
                && f[2].name().equals(DTYPE) && f[2].dataType() == DataTypes.StringType;
    }
}
