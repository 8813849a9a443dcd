package io.github.semyonsinchenko.safetensors.spark.functions;

import static org.apache.spark.sql.functions.call_function;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lit;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.SafetensorsExtensions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkException;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.jdk.javaapi.CollectionConverters;

/** arr_to_st, st_to_array and st_convert through SQL and the DataFrame API, code generated and interpreted. */
class TensorFunctionsTest {
    static SparkSession spark;

    @TempDir
    Path tmp;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[2]").appName("safetensors-functions-test")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.sql.extensions", SafetensorsExtensions.class.getName())
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    // 1.01171875f lies halfway between two BF16 values: RNE picks the even 0x3F82, trunc 0x3F81.
    // 1 + 3 * 2^-11 lies halfway between two F16 values: RNE 0x3C02, trunc 0x3C01.
    private static final float BF16_TIE = 1.01171875f;
    private static final float F16_TIE = 1f + 3f / 2048f;

    private static short[] shorts(byte[] b) {
        short[] out = new short[b.length / 2];
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).asShortBuffer().get(out);
        return out;
    }

    private static Row one(String sql) {
        return spark.sql(sql).collectAsList().get(0);
    }

    @Test
    void arrToStRoundsToNearestEvenByDefaultAndTruncatesOnRequest() {
        String arr = "array(cast(" + BF16_TIE + " as float), cast(" + F16_TIE + " as float))";
        Row r = one("select arr_to_st(" + arr + ", array(2), 'BF16') a, arr_to_st(" + arr + ", array(2), 'bf16', 'trunc') b,"
                + " arr_to_st(" + arr + ", array(1, 2), 'F16') c, arr_to_st(" + arr + ", array(2), 'F16', 'TRUNC') d");
        Row a = r.getStruct(0);
        assertArrayEquals(new short[] {0x3F82, 0x3F80}, shorts((byte[]) a.get(0)));
        assertEquals(List.of(2), a.getList(1));
        assertEquals("BF16", a.getString(2));
        assertArrayEquals(new short[] {0x3F81, 0x3F80}, shorts((byte[]) r.getStruct(1).get(0)));
        Row c = r.getStruct(2);
        assertArrayEquals(new short[] {0x3C0C, 0x3C02}, shorts((byte[]) c.get(0)), "BF16_TIE is exact in F16");
        assertEquals(List.of(1, 2), c.getList(1));
        assertArrayEquals(new short[] {0x3C0C, 0x3C01}, shorts((byte[]) r.getStruct(3).get(0)));
    }

    @Test
    void arrToStEncodesEveryElementTypeLikeTheWriter() {
        Row r = one("select arr_to_st(array(-128, 127), array(2), 'I8') a,"
                + " arr_to_st(array(cast(65535 as int)), array(), 'U16') b,"
                + " arr_to_st(array(cast(9007199254740993 as bigint)), array(1), 'F64') c,"
                + " arr_to_st(array(1.5d, -2.25d), array(2), 'F32') d,"
                + " arr_to_st(array(cast(1 as tinyint)), array(1), 'F64') e,"
                + " arr_to_st(array(cast(16777217 as bigint)), array(1), 'BF16') f");
        assertArrayEquals(new byte[] {(byte) 0x80, 0x7F}, (byte[]) r.getStruct(0).get(0));
        assertArrayEquals(new byte[] {(byte) 0xFF, (byte) 0xFF}, (byte[]) r.getStruct(1).get(0));
        assertEquals(List.of(), r.getStruct(1).getList(1), "a scalar has shape []");
        ByteBuffer c = ByteBuffer.wrap((byte[]) r.getStruct(2).get(0)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(9007199254740992d, c.getDouble(), "2^53 + 1 rounds to even in F64");
        ByteBuffer d = ByteBuffer.wrap((byte[]) r.getStruct(3).get(0)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1.5f, d.getFloat());
        assertEquals(-2.25f, d.getFloat());
        assertEquals(1d, ByteBuffer.wrap((byte[]) r.getStruct(4).get(0)).order(ByteOrder.LITTLE_ENDIAN).getDouble());
        assertArrayEquals(new short[] {0x4B80}, shorts((byte[]) r.getStruct(5).get(0)), "2^24 + 1 to BF16 is 2^24");
    }

    @Test
    void stToArrayWidensEveryKernelDtype() {
        Row r = one("select st_to_array(arr_to_st(array(1.5f, -0.5f), array(2), 'BF16')) a,"
                + " st_to_array(arr_to_st(array(1.5f, -0.5f), array(2), 'F16')) b,"
                + " st_to_array(arr_to_st(array(1.5f, -0.5f), array(2), 'F64')) c,"
                + " st_to_array(arr_to_st(array(-3, 200), array(2), 'I16')) d,"
                + " st_to_array(arr_to_st(array(cast(4294967295 as bigint)), array(1), 'U32')) e,"
                + " st_to_array(arr_to_st(array(7.25f), array(), 'F32')) f,"
                // F8_E4M3 0x38 is 1.0, 0xC4 is -3.0; F8_E5M2 0x3E is 1.5
                + " st_to_array(named_struct('data', X'38C4', 'shape', array(2), 'dtype', 'F8_E4M3')) g,"
                + " st_to_array(named_struct('data', X'3E', 'shape', array(1), 'dtype', 'F8_E5M2')) h");
        assertEquals(List.of(1.5f, -0.5f), r.getList(0));
        assertEquals(List.of(1.5f, -0.5f), r.getList(1));
        assertEquals(List.of(1.5f, -0.5f), r.getList(2));
        assertEquals(List.of(-3f, 200f), r.getList(3));
        assertEquals(List.of(4294967296f), r.getList(4));
        assertEquals(List.of(7.25f), r.getList(5));
        assertEquals(List.of(1.0f, -3.0f), r.getList(6));
        assertEquals(List.of(1.5f), r.getList(7));
    }

    @Test
    void stConvertMatchesArrToStAndKeepsTheShape() {
        Row r = one("select st_convert(arr_to_st(array(" + BF16_TIE + "f, 3f, 4f, 5f), array(2, 2), 'F32'), 'BF16') a,"
                + " arr_to_st(array(" + BF16_TIE + "f, 3f, 4f, 5f), array(2, 2), 'BF16') b,"
                + " st_convert(arr_to_st(array(" + BF16_TIE + "f), array(1), 'F32'), 'BF16', 'trunc') c,"
                + " st_convert(arr_to_st(array(1.5f), array(1), 'BF16'), 'F64') d,"
                + " st_convert(arr_to_st(array(1.5f, 65504f), array(2), 'F16'), 'BF16') e,"
                + " st_convert(arr_to_st(array(1.000000001d), array(1), 'F64'), 'f32') f");
        assertEquals(r.getStruct(1), r.getStruct(0));
        assertEquals(List.of(2, 2), r.getStruct(0).getList(1));
        assertArrayEquals(new short[] {0x3F81}, shorts((byte[]) r.getStruct(2).get(0)));
        assertEquals("F64", r.getStruct(3).getString(2));
        assertEquals(1.5d, ByteBuffer.wrap((byte[]) r.getStruct(3).get(0)).order(ByteOrder.LITTLE_ENDIAN).getDouble());
        assertArrayEquals(new short[] {0x3FC0, 0x4780}, shorts((byte[]) r.getStruct(4).get(0)),
                "65504 rounds to 65536 in BF16");
        assertEquals(1f, ByteBuffer.wrap((byte[]) r.getStruct(5).get(0)).order(ByteOrder.LITTLE_ENDIAN).getFloat());
    }

    @Test
    void nullInNullOut() {
        Row r = one("select arr_to_st(cast(null as array<float>), array(1), 'F32') a,"
                + " arr_to_st(array(1f), cast(null as array<int>), 'F32') b,"
                + " st_to_array(cast(null as struct<data: binary, shape: array<int>, dtype: string>)) c,"
                + " st_convert(cast(null as struct<data: binary, shape: array<int>, dtype: string>), 'F16') d");
        for (int i = 0; i < 4; i++) {
            assertTrue(r.isNullAt(i), "column " + i);
        }
    }

    @Test
    void dataFrameApiWithExprAndCallFunction() {
        Dataset<Row> df = spark.range(4).selectExpr("id", "array(cast(id as float), cast(id * 2 as float)) v");
        List<Row> rows = df.select(col("id"),
                        call_function("st_to_array", call_function("arr_to_st", col("v"), expr("array(2)"), lit("BF16")))
                                .as("back"),
                        expr("st_to_array(st_convert(arr_to_st(v, array(2), 'F32'), 'F16'))").as("viaF16"))
                .orderBy("id").collectAsList();
        for (Row row : rows) {
            float id = row.getLong(0);
            assertEquals(List.of(id, id * 2), row.getList(1));
            assertEquals(List.of(id, id * 2), row.getList(2));
        }
        assertEquals(4, rows.size());
    }

    @Test
    void planIsWholeStageCodegenWithStaticInvokeAndNoFallback() {
        Dataset<Row> df = spark.range(8).selectExpr("st_to_array(st_convert(arr_to_st("
                + "array(cast(id as float), 1.5f), array(2), 'F32'), 'BF16')) x");
        SparkPlan plan = df.queryExecution().executedPlan();
        List<Expression> expressions = new ArrayList<>();
        boolean[] codegen = {false};
        walk(plan, expressions, codegen);
        assertTrue(codegen[0], plan.treeString());
        assertFalse(expressions.stream().anyMatch(e -> e instanceof CodegenFallback), plan.treeString());
        assertFalse(expressions.stream().anyMatch(e -> e instanceof TensorExpression), "replaced by the optimizer");
        assertEquals(3, expressions.stream().filter(e -> e instanceof StaticInvoke s
                && s.staticObject() == TensorFunctionEval.class).count(), plan.treeString());
        assertEquals(8, df.collectAsList().size());
    }

    private static void walk(SparkPlan p, List<Expression> out, boolean[] codegen) {
        if (p instanceof WholeStageCodegenExec) {
            codegen[0] = true;
        }
        for (Expression e : CollectionConverters.asJava(p.expressions())) {
            walk(e, out);
        }
        for (SparkPlan c : CollectionConverters.asJava(p.children())) {
            walk(c, out, codegen);
        }
    }

    private static void walk(Expression e, List<Expression> out) {
        out.add(e);
        for (Expression c : CollectionConverters.asJava(e.children())) {
            walk(c, out);
        }
    }

    @Test
    void interpretedEvaluationGivesTheSameBytes() {
        String query = "select id, arr_to_st(array(cast(id as float) / 3, " + BF16_TIE + "f), array(2), 'BF16') a,"
                + " st_to_array(arr_to_st(array(cast(id as double) / 7), array(1), 'F16')) b,"
                + " st_convert(arr_to_st(array(cast(id as float) / 3), array(1), 'F32'), 'F16', 'trunc') c"
                + " from range(20)";
        List<Row> generated = spark.sql(query).orderBy("id").collectAsList();
        spark.conf().set("spark.sql.codegen.wholeStage", "false");
        spark.conf().set("spark.sql.codegen.factoryMode", "NO_CODEGEN");
        try {
            List<Row> interpreted = spark.sql(query).orderBy("id").collectAsList();
            assertEquals(generated.size(), interpreted.size());
            for (int i = 0; i < generated.size(); i++) {
                assertArrayEquals((byte[]) generated.get(i).getStruct(1).get(0), (byte[]) interpreted.get(i).getStruct(1).get(0));
                assertEquals(generated.get(i).getList(2), interpreted.get(i).getList(2));
                assertArrayEquals((byte[]) generated.get(i).getStruct(3).get(0), (byte[]) interpreted.get(i).getStruct(3).get(0));
            }
        } finally {
            spark.conf().unset("spark.sql.codegen.wholeStage");
            spark.conf().unset("spark.sql.codegen.factoryMode");
        }
    }

    @Test
    void literalArgumentsAreCheckedAtAnalysis() {
        assertAnalysisError("select arr_to_st(array(1f), array(1), 'F17')", "dtype 'F17' is not supported");
        assertAnalysisError("select arr_to_st(array(1f), array(1), 'BOOL')", "dtype 'BOOL' is not supported");
        assertAnalysisError("select arr_to_st(array('a'), array(1), 'F32')", "array of float");
        assertAnalysisError("select arr_to_st(array(1f), array('1'), 'F32')", "shape must be array<int>");
        assertAnalysisError("select arr_to_st(array(1f), array(1), 'I32')", "never truncated to the integer dtype I32");
        assertAnalysisError("select arr_to_st(array(1f), array(1), 'F32', 'up')", "rounding 'up' is not supported");
        assertAnalysisError("select arr_to_st(array(1f), array(1), concat('F', id)) from range(1)",
                "dtype must be a string literal");
        assertAnalysisError("select arr_to_st(array(1f), array(1))", "takes 3 or 4 arguments, got 2");
        assertAnalysisError("select st_to_array(array(1f))", "must be a Tensor Struct");
        assertAnalysisError("select st_convert(arr_to_st(array(1), array(1), 'I32'), 'I8')",
                "dtype 'I8' is not supported; allowed: F16, BF16, F32, F64");
    }

    private static void assertAnalysisError(String sql, String expected) {
        AnalysisException e = assertThrows(AnalysisException.class, () -> spark.sql(sql).collectAsList(), sql);
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void rowErrorsNameTheFunctionAndTheValues() {
        assertRowError("select arr_to_st(array(1f, 2f, 3f), array(2, 2), 'F32')",
                "arr_to_st: shape [2, 2] has 4 elements but the array has 3");
        assertRowError("select arr_to_st(array(1f, null), array(2), 'F32')", "arr_to_st: the array has a null element at index 1");
        assertRowError("select arr_to_st(array(300), array(1), 'U8')", "arr_to_st: value 300 does not fit U8 [0, 255]");
        assertRowError("select arr_to_st(array(1f), array(-1), 'F32')", "arr_to_st: shape [-1] has a null or negative dimension");
        assertRowError("select st_to_array(named_struct('data', X'01', 'shape', array(1), 'dtype', 'BOOL'))",
                "st_to_array: dtype BOOL cannot be read as floats");
        assertRowError("select st_to_array(named_struct('data', X'01', 'shape', array(2), 'dtype', 'F4'))",
                "st_to_array: dtype F4 cannot be read as floats");
        assertRowError("select st_to_array(named_struct('data', X'0102', 'shape', array(2), 'dtype', 'F16'))",
                "st_to_array: Tensor Struct data has 2 bytes but F16 [2] needs 4");
        assertRowError("select st_convert(named_struct('data', X'01', 'shape', array(1), 'dtype', 'I8'), 'F32')",
                "st_convert: the tensor's dtype is I8; only float tensors");
        assertRowError("select st_to_array(named_struct('data', X'01', 'shape', array(1), 'dtype', 'Q8'))",
                "st_to_array: Tensor Struct dtype 'Q8' is not a safetensors dtype");
    }

    private static void assertRowError(String sql, String expected) {
        // Through a table so the values are not constant-folded at planning.
        Exception e = assertThrows(Exception.class, () -> spark.sql(sql + " from range(1)").collectAsList(), sql);
        Throwable t = e;
        while (t != null && !(t instanceof IllegalArgumentException)) {
            t = t.getCause();
        }
        assertTrue(t != null && t.getMessage().contains(expected), e + " / " + (t == null ? null : t.getMessage()));
        assertTrue(e instanceof SparkException || e instanceof IllegalArgumentException, e.toString());
    }

    @Test
    void roundTripThroughTheConnector() {
        Dataset<Row> df = spark.range(0, 50, 1, 2).selectExpr("concat('k', id) key",
                "transform(sequence(0, 5), j -> cast(sin(id * 6 + j) * 100 as float)) v");
        List<Row> rows = df.collectAsList();
        String out = tmp.resolve("ds").toString();
        df.selectExpr("key", "st_convert(arr_to_st(v, array(2, 3), 'F32'), 'BF16') t")
                .write().format("safetensors").option("name_col", "key").save(out);
        Dataset<Row> back = spark.read().format("safetensors").option("inferSchema", "true").load(out);
        List<Row> decoded = back.selectExpr("tensor_key", "t.shape", "t.dtype", "st_to_array(t) f",
                "arr_to_st(st_to_array(t), array(6), 'BF16').data = t.data same").collectAsList();
        assertEquals(50, decoded.size());
        java.util.Map<String, List<Float>> expected = new java.util.HashMap<>();
        for (Row r : rows) {
            List<Float> rounded = new ArrayList<>();
            for (Object f : r.getList(1)) {
                rounded.add(Float.intBitsToFloat(bf16Rne(Float.floatToRawIntBits((Float) f)) << 16));
            }
            expected.put(r.getString(0), rounded);
        }
        for (Row r : decoded) {
            assertEquals(List.of(2, 3), r.getList(1));
            assertEquals("BF16", r.getString(2));
            assertEquals(expected.get(r.getString(0)), r.getList(3), r.getString(0));
            assertTrue(r.getBoolean(4), "BF16 -> F32 -> BF16 is the identity");
        }
    }

    /** Reference RNE for finite floats, written out independently of the kernels. */
    private static int bf16Rne(int bits) {
        int lsb = (bits >>> 16) & 1;
        return (bits + 0x7FFF + lsb) >>> 16;
    }

    @Test
    void functionsAreDescribed() {
        String usage = spark.sql("describe function arr_to_st").collectAsList().toString();
        assertTrue(usage.contains("rounding 'rne' (default) or 'trunc'"), usage);
    }

    @Test
    void unusedResultIsNull() {
        assertNull(one("select st_to_array(if(1 = 0, arr_to_st(array(1f), array(1), 'F32'), null))").get(0));
    }
}
