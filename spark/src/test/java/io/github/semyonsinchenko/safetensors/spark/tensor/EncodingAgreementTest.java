package io.github.semyonsinchenko.safetensors.spark.tensor;

import static io.github.semyonsinchenko.safetensors.format.LittleEndian.F32;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.F64;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I16;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I32;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I64;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.SafetensorsExtensions;
import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The writer's {@code dtype} option, the SQL functions and {@link DtypeEncoding}'s generic-array
 * path give exactly the bits of the core kernels' bulk conversions: widening over all 65,536 F16
 * and all 65,536 BF16 patterns, narrowing over F32 values chosen to hit every rounding case (NaN
 * payloads, signed zeros, infinities, subnormals, ties and their neighbours for both formats, the
 * F16 overflow boundary) plus seeded random ones, from float and from double arrays.
 */
class EncodingAgreementTest {

    static SparkSession spark;

    @TempDir
    Path tmp;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[1]").appName("safetensors-encoding-agreement")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "1")
                .config("spark.sql.extensions", SafetensorsExtensions.class.getName())
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    // ------------------------------------------------------------------ inputs

    /** Every 16-bit pattern, little-endian. */
    static byte[] all16BitPatterns() {
        MemorySegment s = MemorySegment.ofArray(new byte[0x10000 * 2]);
        for (int h = 0; h < 0x10000; h++) {
            s.set(I16, h * 2L, (short) h);
        }
        return s.toArray(ValueLayout.JAVA_BYTE);
    }

    /**
     * F32 bit patterns for narrowing: at every exponent (zero/subnormal, normal, Inf/NaN) and both
     * signs, mantissas at the BF16 and F16 ties and one either side, at the F16 subnormal ties,
     * the extremes, and NaN payloads (quiet and signalling); then seeded random patterns.
     */
    static float[] narrowingInputs() {
        List<Integer> bits = new ArrayList<>();
        int[] mantissas = {0, 1, 2, 0x7FFF, 0x8000, 0x8001, 0x18000, 0xFFF, 0x1000, 0x1001, 0x3000, 0x2FFF,
            0x3001, 0x3FFFFF, 0x400000, 0x400001, 0x7FFFFF, 0x7FE000, 0x7FF000, 0x7FEFFF, 0x7FF001, 0x12345};
        for (int exp = 0; exp < 256; exp++) {
            for (int m : mantissas) {
                bits.add((exp << 23) | m);
            }
        }
        SplittableRandom random = new SplittableRandom(8);
        for (int i = 0; i < 20_000; i++) {
            bits.add(random.nextInt() & 0x7FFFFFFF);
        }
        float[] out = new float[bits.size() * 2];
        for (int i = 0; i < bits.size(); i++) {
            out[2 * i] = Float.intBitsToFloat(bits.get(i));
            out[2 * i + 1] = Float.intBitsToFloat(bits.get(i) | 0x80000000);
        }
        return out;
    }

    static byte[] kernel(Conversion c, byte[] src) {
        long n = src.length / c.sourceBytes();
        byte[] dst = new byte[Math.toIntExact(n * c.targetBytes())];
        Kernels.convert(c, MemorySegment.ofArray(src), MemorySegment.ofArray(dst), n);
        return dst;
    }

    static byte[] bytes(float[] f) {
        return MemorySegment.ofArray(f).toArray(ValueLayout.JAVA_BYTE);
    }

    /** F16/BF16 bytes widened exactly by the kernel, then to double per element. */
    static byte[] widenToF64(Conversion toF32, byte[] src16) {
        byte[] f32 = kernel(toF32, src16);
        MemorySegment in = MemorySegment.ofArray(f32);
        MemorySegment out = MemorySegment.ofArray(new byte[f32.length * 2]);
        for (long i = 0; i < f32.length / 4; i++) {
            out.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, i * 8, (double) Float.intBitsToFloat(in.get(I32, i * 4)));
        }
        return out.toArray(ValueLayout.JAVA_BYTE);
    }

    static void assertSameBits(byte[] expected, byte[] actual, int width, String what) {
        assertEquals(expected.length, actual.length, what + ": byte length");
        long m = MemorySegment.ofArray(expected).mismatch(MemorySegment.ofArray(actual));
        if (m >= 0) {
            long i = m / width;
            throw new AssertionError(String.format(Locale.ROOT, "%s: element %d: expected 0x%X, got 0x%X", what, i,
                    element(expected, i, width), element(actual, i, width)));
        }
    }

    private static long element(byte[] b, long i, int width) {
        MemorySegment s = MemorySegment.ofArray(b);
        return switch (width) {
            case 2 -> s.get(I16, i * 2) & 0xFFFF;
            case 4 -> s.get(I32, i * 4) & 0xFFFFFFFFL;
            default -> s.get(I64, i * 8);
        };
    }

    private static Row tensor(byte[] data, int n, Dtype dtype) {
        return RowFactory.create(data, List.of(n), dtype.name());
    }

    // ------------------------------------------------------------------ the encoding itself

    @Test
    void genericAndUnsafeArraysEncodeLikeTheKernels() {
        float[] f = narrowingInputs();
        double[] d = new double[f.length];
        Object[] boxedF = new Object[f.length];
        Object[] boxedD = new Object[f.length];
        for (int i = 0; i < f.length; i++) {
            d[i] = f[i]; // exact, so every double path must round like the float one
            boxedF[i] = f[i];
            boxedD[i] = d[i];
        }
        List<ArrayData> floats = List.of(UnsafeArrayData.fromPrimitiveArray(f), new GenericArrayData(boxedF));
        List<ArrayData> doubles = List.of(UnsafeArrayData.fromPrimitiveArray(d), new GenericArrayData(boxedD));
        for (Conversion c : List.of(Conversion.F32_TO_BF16_RNE, Conversion.F32_TO_BF16_TRUNC,
                Conversion.F32_TO_F16_RNE, Conversion.F32_TO_F16_TRUNC)) {
            boolean truncate = c.name().endsWith("_TRUNC");
            byte[] expected = kernel(c, bytes(f));
            for (ArrayData a : floats) {
                assertSameBits(expected, encode(a, ElementType.FLOAT, c.target(), truncate), 2,
                        c + " from " + a.getClass().getSimpleName() + " of float");
            }
            for (ArrayData a : doubles) {
                assertSameBits(expected, encode(a, ElementType.DOUBLE, c.target(), truncate), 2,
                        c + " from " + a.getClass().getSimpleName() + " of double");
            }
        }
        byte[] f64ToF32 = kernel(Conversion.F64_TO_F32, MemorySegment.ofArray(d).toArray(ValueLayout.JAVA_BYTE));
        for (ArrayData a : doubles) {
            assertSameBits(f64ToF32, encode(a, ElementType.DOUBLE, Dtype.F32, false), 4,
                    "F64 to F32 from " + a.getClass().getSimpleName());
        }
    }

    private static byte[] encode(ArrayData a, ElementType e, Dtype target, boolean truncate) {
        byte[] out = new byte[Math.toIntExact(target.storageBytes(a.numElements()))];
        long end = DtypeEncoding.encode(a, e, target, truncate, MemorySegment.ofArray(out), 0);
        assertEquals(out.length, end);
        return out;
    }

    @Test
    void every16BitPatternWidensLikeTheKernels() {
        byte[] all = all16BitPatterns();
        for (Dtype from : List.of(Dtype.F16, Dtype.BF16)) {
            Conversion widen = Conversion.toF32(from).orElseThrow();
            Conversion across = Conversion.of(from, from == Dtype.F16 ? Dtype.BF16 : Dtype.F16).orElseThrow();
            assertSameBits(kernel(widen, all), convert(all, from, Dtype.F32), 4, from + " to F32");
            assertSameBits(kernel(across, all), convert(all, from, across.target()), 2, across.toString());
            assertSameBits(widenToF64(widen, all), convert(all, from, Dtype.F64), 8, from + " to F64");
        }
    }

    private static byte[] convert(byte[] src, Dtype from, Dtype to) {
        byte[] out = new byte[Math.toIntExact(to.storageBytes(src.length / from.byteSize()))];
        DtypeEncoding.convertFloats(MemorySegment.ofArray(src), from, MemorySegment.ofArray(out), to, false);
        return out;
    }

    // ------------------------------------------------------------------ the SQL functions

    @Test
    void sqlFunctionsAgreeWithTheKernels() {
        byte[] all = all16BitPatterns();
        StructType schema = new StructType().add("f16", TensorStruct.TYPE).add("bf16", TensorStruct.TYPE);
        spark.createDataFrame(List.of(RowFactory.create(tensor(all, 0x10000, Dtype.F16),
                tensor(all, 0x10000, Dtype.BF16))), schema).createOrReplaceTempView("patterns");
        Row w = spark.sql("select st_convert(f16, 'F32').data, st_convert(bf16, 'F32').data,"
                + " st_convert(f16, 'BF16').data, st_convert(bf16, 'F16').data,"
                + " st_convert(f16, 'F64').data, st_convert(bf16, 'F64').data,"
                + " arr_to_st(st_to_array(f16), array(65536), 'F32').data,"
                + " arr_to_st(st_to_array(bf16), array(65536), 'F32').data from patterns").first();
        assertSameBits(kernel(Conversion.F16_TO_F32, all), (byte[]) w.get(0), 4, "st_convert(F16 -> F32)");
        assertSameBits(kernel(Conversion.BF16_TO_F32, all), (byte[]) w.get(1), 4, "st_convert(BF16 -> F32)");
        assertSameBits(kernel(Conversion.F16_TO_BF16, all), (byte[]) w.get(2), 2, "st_convert(F16 -> BF16)");
        assertSameBits(kernel(Conversion.BF16_TO_F16, all), (byte[]) w.get(3), 2, "st_convert(BF16 -> F16)");
        assertSameBits(widenToF64(Conversion.F16_TO_F32, all), (byte[]) w.get(4), 8, "st_convert(F16 -> F64)");
        assertSameBits(widenToF64(Conversion.BF16_TO_F32, all), (byte[]) w.get(5), 8, "st_convert(BF16 -> F64)");
        assertSameBits(kernel(Conversion.F16_TO_F32, all), (byte[]) w.get(6), 4, "st_to_array(F16)");
        assertSameBits(kernel(Conversion.BF16_TO_F32, all), (byte[]) w.get(7), 4, "st_to_array(BF16)");

        float[] f = narrowingInputs();
        Dataset<Row> values = floatsAndDoubles(f);
        values.createOrReplaceTempView("narrowing");
        // The input survives Spark unchanged (NaN payloads included), so the kernels see the same bits.
        assertSameBits(bytes(f), (byte[]) spark.sql("select arr_to_st(f, array(" + f.length + "), 'F32').data"
                + " from narrowing").first().get(0), 4, "float array through Spark");
        for (Conversion c : List.of(Conversion.F32_TO_BF16_RNE, Conversion.F32_TO_BF16_TRUNC,
                Conversion.F32_TO_F16_RNE, Conversion.F32_TO_F16_TRUNC)) {
            String rounding = c.name().endsWith("_TRUNC") ? "trunc" : "rne";
            String args = ", array(" + f.length + "), '" + c.target() + "', '" + rounding + "').data";
            Row r = spark.sql("select arr_to_st(f" + args + ", arr_to_st(d" + args
                    + ", st_convert(arr_to_st(f, array(" + f.length + "), 'F32'), '" + c.target() + "', '"
                    + rounding + "').data from narrowing").first();
            byte[] expected = kernel(c, bytes(f));
            assertSameBits(expected, (byte[]) r.get(0), 2, "arr_to_st(float[]) " + c);
            assertSameBits(expected, (byte[]) r.get(1), 2, "arr_to_st(double[]) " + c);
            assertSameBits(expected, (byte[]) r.get(2), 2, "st_convert(F32) " + c);
        }
    }

    private static Dataset<Row> floatsAndDoubles(float[] f) {
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) {
            d[i] = f[i];
        }
        StructType schema = new StructType()
                .add("f", DataTypes.createArrayType(DataTypes.FloatType, false), false)
                .add("d", DataTypes.createArrayType(DataTypes.DoubleType, false), false);
        return spark.createDataFrame(List.of(RowFactory.create(f, d)), schema);
    }

    // ------------------------------------------------------------------ the writer's dtype option

    @Test
    void writerDtypeOptionAgreesWithTheKernels() {
        byte[] all = all16BitPatterns();
        Row f16 = tensor(all, 0x10000, Dtype.F16);
        Row bf16 = tensor(all, 0x10000, Dtype.BF16);
        StructType two = new StructType().add("a", TensorStruct.TYPE, false).add("b", TensorStruct.TYPE, false);

        List<Row> f32 = write(spark.createDataFrame(List.of(RowFactory.create(f16, bf16)), two), "F32", "a", "b");
        assertSameBits(kernel(Conversion.F16_TO_F32, all), (byte[]) f32.get(0).get(0), 4, "writer F16 -> F32");
        assertSameBits(kernel(Conversion.BF16_TO_F32, all), (byte[]) f32.get(1).get(0), 4, "writer BF16 -> F32");
        List<Row> f64 = write(spark.createDataFrame(List.of(RowFactory.create(f16, bf16)), two), "F64", "a", "b");
        assertSameBits(widenToF64(Conversion.F16_TO_F32, all), (byte[]) f64.get(0).get(0), 8, "writer F16 -> F64");
        assertSameBits(widenToF64(Conversion.BF16_TO_F32, all), (byte[]) f64.get(1).get(0), 8, "writer BF16 -> F64");

        float[] f = narrowingInputs();
        for (Dtype target : List.of(Dtype.BF16, Dtype.F16)) {
            Row across = target == Dtype.BF16 ? f16 : bf16;
            Dataset<Row> df = floatsAndDoubles(f).crossJoin(spark.createDataFrame(List.of(RowFactory.create(across)),
                    new StructType().add("t", TensorStruct.TYPE, false)));
            List<Row> out = write(df, target.name(), "f", "d", "t");
            Conversion c = Conversion.of(Dtype.F32, target).orElseThrow();
            byte[] expected = kernel(c, bytes(f));
            assertSameBits(expected, (byte[]) out.get(0).get(0), 2, "writer float[] -> " + target);
            assertSameBits(expected, (byte[]) out.get(1).get(0), 2, "writer double[] -> " + target);
            Conversion direct = Conversion.of(across.getString(2).equals("F16") ? Dtype.F16 : Dtype.BF16, target)
                    .orElseThrow();
            assertSameBits(kernel(direct, all), (byte[]) out.get(2).get(0), 2, "writer " + direct);
        }
    }

    /** Writes {@code df} with the {@code dtype} option (one row, batch mode) and reads each column's data back. */
    private List<Row> write(Dataset<Row> df, String dtype, String... columns) {
        Path out = tmp.resolve("w-" + dtype + "-" + columns.length);
        df.coalesce(1).write().format("safetensors").option("batch_size", "1").option("dtype", dtype)
                .mode("overwrite").save(out.toString());
        Dataset<Row> back = spark.read().format("safetensors").option("inferSchema", "true").load(out.toString());
        List<Row> rows = new ArrayList<>();
        for (String c : columns) {
            List<Row> r = back.select(c + ".data", c + ".dtype").collectAsList();
            assertEquals(1, r.size(), c);
            assertEquals(dtype, r.get(0).getString(1), c);
            rows.add(r.get(0));
        }
        assertTrue(rows.size() == columns.length);
        return rows;
    }
}
