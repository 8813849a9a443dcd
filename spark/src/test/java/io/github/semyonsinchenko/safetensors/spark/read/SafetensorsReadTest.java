package io.github.semyonsinchenko.safetensors.spark.read;

import static io.github.semyonsinchenko.safetensors.spark.read.TestData.le;
import static org.apache.spark.sql.functions.array;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsReadTest extends SparkTestBase {
    @TempDir
    static Path tmp;
    static Path plain;
    static Path batch;
    static Path kv;
    static Path kvIndexed;
    static Path kvIndexedDir;
    static Path kvSingle;

    @BeforeAll
    static void data() throws Exception {
        plain = TestData.plain(tmp.resolve("plain"));
        batch = TestData.batch(tmp.resolve("batch"));
        kv = TestData.kv(tmp.resolve("kv"));
        kvIndexed = TestData.kv(tmp.resolve("kv-indexed"));
        TestData.kvIndex(spark, kvIndexed, List.of("image", "label"));
        kvIndexedDir = TestData.kv(tmp.resolve("kv-indexed-dir"));
        TestData.kvIndex(spark, kvIndexedDir, List.of("image", "label"), true);
        kvSingle = TestData.kvSingle(tmp.resolve("kv-single"));
    }

    @BeforeEach
    void resetCounters() {
        CountingFileSystem.reset();
    }

    static DataFrameReader reader() {
        return spark.read().format("safetensors").option("inferSchema", "true");
    }

    static Dataset<Row> read(Path p) {
        return reader().load(p.toString());
    }

    static Dataset<Row> readRemote(Path p) {
        return reader().load(CountingFileSystem.uri(p));
    }

    static Row byKey(List<Row> rows, String key) {
        return rows.stream().filter(r -> key.equals(r.getAs("tensor_key"))).findFirst().orElseThrow();
    }

    static List<Integer> shape(Row tensor) {
        return tensor.getList(TensorStruct.SHAPE_ORDINAL);
    }

    // ------------------------------------------------------------ schema

    @Test
    void withoutSchemaOrInferSchemaTheErrorSaysWhatToDo() {
        AnalysisException e = assertThrows(AnalysisException.class,
                () -> spark.read().format("safetensors").load(plain.toString()));
        assertTrue(e.getMessage().contains(".schema(...)"), e.getMessage());
        assertTrue(e.getMessage().contains("inferSchema"), e.getMessage());
    }

    @Test
    void plainFilesAreWideWithNullableColumnsFromTheFirstHeader() {
        Dataset<Row> df = read(plain);
        StructType s = df.schema();
        // Offset order of a.safetensors: I64 before F32 (the writer's alignment order).
        assertArrayEquals(new String[] {"y", "x"}, s.fieldNames());
        assertTrue(s.apply("x").nullable() && s.apply("y").nullable());
        assertTrue(TensorStruct.is(s.apply("x").dataType()));
        List<Row> rows = df.collectAsList();
        assertEquals(2, rows.size());
        Row a = rows.stream().filter(r -> !r.isNullAt(0)).findFirst().orElseThrow();
        Row b = rows.stream().filter(r -> r.isNullAt(0)).findFirst().orElseThrow();
        Row ax = a.getStruct(1);
        assertArrayEquals(le(0f, 1, 2, 3, 4, 5), (byte[]) ax.get(0));
        assertEquals(List.of(2, 3), shape(ax));
        assertEquals("F32", ax.getString(2));
        assertArrayEquals(le(7L, 8, 9, 10), (byte[]) a.getStruct(0).get(0));
        assertArrayEquals(le(6f, 7, 8, 9, 10, 11), (byte[]) b.getStruct(1).get(0));
    }

    @Test
    void aUserSchemaPicksTheColumns() {
        StructType schema = new StructType().add("x", TensorStruct.TYPE, true).add("z", TensorStruct.TYPE, true);
        List<Row> rows = spark.read().format("safetensors").schema(schema).load(plain.toString()).collectAsList();
        assertEquals(2, rows.size());
        assertEquals(1, rows.stream().filter(r -> r.isNullAt(1)).count());
        Row b = rows.stream().filter(r -> !r.isNullAt(1)).findFirst().orElseThrow();
        assertEquals("F16", b.getStruct(1).getString(2));
    }

    @Test
    void aUserSchemaWithANonTensorColumnIsRejected() {
        StructType schema = new StructType().add("x", DataTypes.StringType);
        assertThrows(AnalysisException.class,
                () -> spark.read().format("safetensors").schema(schema).load(plain.toString()).collect());
    }

    @Test
    void aNotNullColumnMissingFromAFileFailsInsteadOfReturningNull() {
        StructType schema = new StructType().add("y", TensorStruct.TYPE, false);
        Exception e = assertThrows(Exception.class,
                () -> spark.read().format("safetensors").schema(schema).load(plain.toString()).collect());
        assertTrue(stackMessages(e).contains("b.safetensors"), stackMessages(e));
    }

    // ------------------------------------------------------------ batch layout

    @Test
    void batchDatasetsReadOneRowPerBatchWithNotNullColumns() {
        Dataset<Row> df = read(batch);
        assertArrayEquals(new String[] {"image", "label"}, df.schema().fieldNames());
        assertFalse(df.schema().apply("image").nullable());
        List<Row> rows = df.collectAsList();
        assertEquals(3, rows.size());
        List<Integer> firstDims = rows.stream().map(r -> shape(r.getStruct(0)).getFirst()).sorted().toList();
        assertEquals(List.of(2, 2, 3), firstDims);
    }

    @Test
    void unbatchReturnsTheOriginalRows() {
        Dataset<Row> df = reader().option("unbatch", "true").load(batch.toString());
        List<Row> rows = df.collectAsList();
        assertEquals(7, rows.size());
        for (int i = 0; i < 7; i++) {
            int sample = i;
            Row r = rows.stream().filter(x -> java.util.Arrays.equals(le(TestData.label(sample)),
                    (byte[]) x.getStruct(1).get(0))).findFirst().orElseThrow();
            assertArrayEquals(le(TestData.image(i)), (byte[]) r.getStruct(0).get(0));
            assertEquals(List.of(2, 2), shape(r.getStruct(0)));
            assertEquals(List.of(), shape(r.getStruct(1)));
            assertEquals("I64", r.getStruct(1).getString(2));
        }
        assertEquals(7, reader().option("unbatch", "true").load(batch.toString()).count());
    }

    @Test
    void unbatchLeavesOutThePaddingOfAPaddedTailBatch() throws Exception {
        Path padded = TestData.batch(tmp.resolve("batch-padded"), true);
        assertEquals(3, read(padded).count()); // batches as stored, padding included
        assertEquals(canonical(reader().option("unbatch", "true").load(batch.toString())),
                canonical(reader().option("unbatch", "true").load(padded.toString())));
    }

    // ------------------------------------------------------------ kv layout

    @Test
    void kvDatasetsReadOneRowPerKey() {
        Dataset<Row> df = read(kv);
        assertArrayEquals(new String[] {"tensor_key", "image", "label"}, df.schema().fieldNames());
        assertFalse(df.schema().apply("tensor_key").nullable());
        assertTrue(df.schema().apply("label").nullable());
        List<Row> rows = df.collectAsList();
        assertEquals(7, rows.size());
        for (int k = 0; k < 7; k++) {
            Row r = byKey(rows, "k" + k);
            assertArrayEquals(le(TestData.kvImage(k)), (byte[]) r.getStruct(1).get(0));
            if (k == 6) {
                assertTrue(r.isNullAt(2));
            } else {
                assertArrayEquals(le(TestData.kvLabel(k)), (byte[]) r.getStruct(2).get(0));
            }
        }
    }

    @Test
    void kvWithOneColumnNamesTensorsByKey() {
        List<Row> rows = read(kvSingle).collectAsList();
        assertEquals(3, rows.size());
        assertArrayEquals(le(7f, 8, 9), (byte[]) byKey(rows, "c").getStruct(1).get(0));
    }

    @Test
    void anyFileReadsAsKvWithOneRowPerTensor() {
        Dataset<Row> df = reader().option("layout", "kv").load(plain.toString());
        assertArrayEquals(new String[] {"tensor_key", "tensor"}, df.schema().fieldNames());
        List<Row> rows = df.collectAsList();
        assertEquals(4, rows.size()); // a: x, y; b: x, z
        assertEquals("F16", byKey(rows, "z").getStruct(1).getString(2));
    }

    // ------------------------------------------------------------ count and pruning

    @Test
    void countIsTheSameWhateverTheProjectionAndWhetherAnIndexExists() {
        for (Path p : List.of(kv, kvIndexed, kvIndexedDir)) {
            Dataset<Row> df = read(p);
            assertEquals(7, df.count(), p.toString());
            assertEquals(7, df.select("tensor_key").count());
            assertEquals(7, df.select(col("image.shape")).count());
            assertEquals(7, df.collectAsList().size());
            assertEquals(1, df.where(col("tensor_key").equalTo("k4")).count());
            assertEquals(3, df.where(col("tensor_key").isin("k0", "k4", "k6", "nope")).count());
        }
        assertEquals(2, read(plain).count());
        assertEquals(3, read(batch).count());
        assertEquals(7, reader().option("unbatch", "true").load(batch.toString()).select(col("label.dtype")).count());
    }

    @Test
    void nestedPruningEmitsExactlyTheRequestedStructAndReadsNoTensorBytes() throws Exception {
        Dataset<Row> df = readRemote(kv).select(col("image.shape"));
        StructType scanned = scanSchema(df);
        assertEquals(new StructType().add("image", new StructType().add(TensorStruct.SHAPE,
                DataTypes.createArrayType(DataTypes.IntegerType, false), false), true), scanned);
        List<Row> rows = df.collectAsList();
        assertEquals(7, rows.size());
        rows.forEach(r -> assertEquals(List.of(2), r.getList(0)));
        // Headers only: every shard's, and the first one's once more, checked against the manifest on the driver.
        assertEquals(headerBytes(kv) + firstShardHeaderBytes(kv), CountingFileSystem.TENSOR_FILE_BYTES.get());
        assertEquals(3 + 1, CountingFileSystem.tensorFileOpens());

        CountingFileSystem.reset();
        assertEquals(7, readRemote(kv).count());
        assertEquals(headerBytes(kv) + firstShardHeaderBytes(kv), CountingFileSystem.TENSOR_FILE_BYTES.get());
    }

    @Test
    void dataOnlyReadsTheRequestedTensors() throws Exception {
        List<Row> rows = readRemote(kv).select(col("label.data")).collectAsList();
        assertEquals(7, rows.size());
        // six I64 labels of 8 bytes, nothing of the images (and the driver's check of the first header)
        assertEquals(headerBytes(kv) + firstShardHeaderBytes(kv) + 6 * 8, CountingFileSystem.TENSOR_FILE_BYTES.get());
    }

    // ------------------------------------------------------------ pushdown

    @Test
    void tensorKeyEqualityWithAnIndexOpensOneFileAndIsShownInExplain() throws Exception {
        Dataset<Row> df = readRemote(kvIndexed).where(col("tensor_key").equalTo("k3"));
        String plan = df.queryExecution().executedPlan().toString();
        assertTrue(plan.contains("PushedFilters: [tensor_key = 'k3'"), plan);
        assertFalse(plan.contains("Filter "), "nothing left for Spark to filter: " + plan);
        CountingFileSystem.reset();
        List<Row> rows = df.collectAsList();
        assertEquals(1, rows.size());
        assertArrayEquals(le(TestData.kvImage(3)), (byte[]) rows.getFirst().getStruct(1).get(0));
        assertEquals(1, CountingFileSystem.tensorFileOpens(), CountingFileSystem.OPENS.toString());
        assertEquals(1, CountingFileSystem.OPENS.get(TestData.shard(1)).get());
    }

    @Test
    void theIndexMayBeADirectoryOfPartFiles() {
        CountingFileSystem.reset();
        List<Row> rows = readRemote(kvIndexedDir).where(col("tensor_key").isin("k0", "k6")).collectAsList();
        assertEquals(2, rows.size());
        // An index without a recorded hash (written by hand) is checked against the two shards it selects
        // on the driver, which also checks the first shard against the manifest; then the two are read.
        assertEquals(2 + 1 + 2, CountingFileSystem.tensorFileOpens(), CountingFileSystem.OPENS.toString());
    }

    @Test
    void schemaInferenceFallsBackToTheIndexColumns() throws Exception {
        Path noSchema = tmp.resolve("kv-index-no-schema");
        TestData.kv(noSchema);
        TestData.kvIndex(spark, noSchema, List.of("image", "label"));
        Path m = noSchema.resolve("dataset_manifest.json");
        Files.writeString(m, Files.readString(m).replaceFirst("\"schema\": \\{.*?\\}\\}, ", ""));
        assertFalse(Files.readString(m).contains("\"schema\""), Files.readString(m));
        // Columns in the index's order of first appearance (here the file's offset order).
        assertEquals(java.util.Set.of("tensor_key", "image", "label"),
                java.util.Set.of(read(noSchema).schema().fieldNames()));
        assertEquals(canonical(read(kv)), canonical(read(noSchema).select("tensor_key", "image", "label")));
    }

    @Test
    void tensorKeyInWithoutAnIndexReadsHeadersAndOnlyTheMatchingTensors() throws Exception {
        // no gap spanned: the bytes read are exactly the matching tensors (CoalescedReadTest covers gaps)
        List<Row> rows = reader().option("coalesce_gap_bytes", "0").load(CountingFileSystem.uri(kv))
                .where(col("tensor_key").isin("k1", "k5")).collectAsList();
        assertEquals(2, rows.size());
        assertEquals(3 + 1, CountingFileSystem.tensorFileOpens(), "every shard, and the first one on the driver");
        // per key: image F32[2] (8 bytes) + label I64 (8 bytes)
        assertEquals(headerBytes(kv) + firstShardHeaderBytes(kv) + 2 * 16, CountingFileSystem.TENSOR_FILE_BYTES.get());
    }

    @Test
    void dtypeAndShapePredicatesArePushedAndSkipFilesFromHeaders() throws Exception {
        Dataset<Row> df = readRemote(plain).where(col("y.dtype").equalTo("I64")).select(col("x.data"));
        String plan = df.queryExecution().executedPlan().toString();
        assertTrue(plan.contains("PushedFilters: [") && plan.contains("y.dtype = 'I64'"), plan);
        assertFalse(plan.contains("Filter "), plan);
        CountingFileSystem.reset();
        List<Row> rows = df.collectAsList();
        assertEquals(1, rows.size());
        assertArrayEquals(le(0f, 1, 2, 3, 4, 5), (byte[]) rows.getFirst().get(0));
        assertEquals(headerBytes(plain) + 24, CountingFileSystem.TENSOR_FILE_BYTES.get()); // only a's x

        StructType xz = new StructType().add("x", TensorStruct.TYPE, true).add("z", TensorStruct.TYPE, true);
        Dataset<Row> withZ = spark.read().format("safetensors").schema(xz).load(plain.toString());
        assertEquals(1, withZ.where(col("z.shape").equalTo(array(lit(2)))).count());
        assertEquals(0, withZ.where(col("z.shape").equalTo(array(lit(3)))).count());
        assertEquals(2, read(plain).where(col("x.shape").equalTo(array(lit(2), lit(3)))).count());
        assertEquals(5, read(kv).where(col("tensor_key").isin("k0", "k1", "k2", "k5", "k6")
                .and(col("image.dtype").equalTo("F32"))).count());
    }

    /** Every pushed predicate must give what Spark itself computes on the same rows. */
    @Test
    void pushedPredicatesMatchSparkSemanticsExactly() {
        StructType xyz = new StructType().add("x", TensorStruct.TYPE, true).add("y", TensorStruct.TYPE, true)
                .add("z", TensorStruct.TYPE, true);
        Dataset<Row> all = spark.read().format("safetensors").schema(xyz).load(plain.toString());
        Dataset<Row> local = spark.createDataFrame(all.collectAsList(), all.schema());
        List<Column> predicates = List.of(
                col("y.dtype").equalTo("I64"),
                col("y.dtype").notEqual("I64"),
                functions_not(col("y.dtype").equalTo("I64")),
                col("y.dtype").eqNullSafe(lit(null).cast("string")),
                col("y").isNull(),
                col("z").isNotNull(),
                col("y.dtype").isin("I64", "F16").or(col("z.dtype").startsWith("F1")),
                col("x.shape").equalTo(array(lit(2), lit(3))).and(col("z.shape").isNull()),
                col("x.dtype").endsWith("32"),
                col("x.dtype").contains("3"));
        for (Column p : predicates) {
            Dataset<Row> pushed = spark.read().format("safetensors").schema(xyz).load(plain.toString()).where(p);
            String plan = pushed.queryExecution().executedPlan().toString();
            assertFalse(plan.contains("Filter "), "fully pushed: " + plan);
            assertEquals(canonical(local.where(p)), canonical(pushed), p.toString());
        }
        Dataset<Row> kvAll = read(kv);
        Dataset<Row> kvLocal = spark.createDataFrame(kvAll.collectAsList(), kvAll.schema());
        for (Column p : List.of(col("tensor_key").startsWith("k1"), col("tensor_key").notEqual("k2"),
                col("label").isNull().or(col("tensor_key").equalTo("k0")),
                functions_not(col("tensor_key").isin("k1", "k2")))) {
            assertEquals(canonical(kvLocal.where(p)), canonical(read(kv).where(p)), p.toString());
            assertEquals(canonical(kvLocal.where(p)), canonical(read(kvIndexed).where(p)), p.toString());
        }
    }

    private static Column functions_not(Column c) {
        return org.apache.spark.sql.functions.not(c);
    }

    @Test
    void valuePredicatesStayWithSpark() {
        Dataset<Row> df = read(plain).where(col("x.data").equalTo(lit(le(6f, 7, 8, 9, 10, 11))));
        String plan = df.queryExecution().executedPlan().toString();
        assertTrue(plan.contains("Filter"), plan);
        assertTrue(plan.contains("PushedFilters: []"), plan);
        assertEquals(1, df.count());
    }

    // ------------------------------------------------------------ errors

    @Test
    void aCorruptHeaderNamesTheFileAndIgnoreCorruptFilesSkipsIt() throws Exception {
        Path dir = tmp.resolve("corrupt");
        TestData.plain(dir);
        Files.write(dir.resolve("c.safetensors"), new byte[] {(byte) 0xff, 0, 0, 0, 0, 0, 0, 0, '{', '}'});
        Exception e = assertThrows(Exception.class, () -> read(dir).select(col("x.dtype")).collect());
        assertTrue(stackMessages(e).contains("c.safetensors"), stackMessages(e));
        assertEquals(2, reader().option("ignoreCorruptFiles", "true").load(dir.toString()).collectAsList().size());
        assertEquals(2, reader().option("ignoreCorruptFiles", "true").load(CountingFileSystem.uri(dir)).count());
    }

    // ------------------------------------------------------------ remote vs local

    @Test
    void rangeReadsThroughHadoopGiveTheSameRowsAsMmap() {
        for (Path p : List.of(plain, batch, kv, kvIndexed, kvSingle)) {
            assertEquals(canonical(read(p)), canonical(readRemote(p)), p.toString());
            assertEquals(canonical(read(p)), canonical(reader().option("mmap", "false").load(p.toString())));
        }
        assertEquals(canonical(reader().option("unbatch", "true").load(batch.toString())),
                canonical(reader().option("unbatch", "true").load(CountingFileSystem.uri(batch))));
    }

    // ------------------------------------------------------------ files written by the Python library

    @Test
    void filesWrittenByTheHuggingFaceLibraryReadBackExactly() throws Exception {
        Path dir = Path.of(SafetensorsReadTest.class.getResource("/hf/plain").toURI());
        var expected = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(dir.resolveSibling("expected.json").toFile());
        // kv: one row per tensor of every file, so every tensor is compared.
        List<Row> rows = reader().option("layout", "kv").load(dir.toString()).collectAsList();
        int total = 0;
        for (var file : (Iterable<Map.Entry<String, com.fasterxml.jackson.databind.JsonNode>>)
                expected.properties()::iterator) {
            for (var t : (Iterable<Map.Entry<String, com.fasterxml.jackson.databind.JsonNode>>)
                    file.getValue().properties()::iterator) {
                total++;
                List<Row> matches = rows.stream().filter(r -> r.getString(0).equals(t.getKey())
                        && java.util.HexFormat.of().formatHex((byte[]) r.getStruct(1).get(0))
                                .equals(t.getValue().get("hex").asText())).toList();
                assertEquals(1, matches.size(), file.getKey() + " " + t.getKey());
                Row tensor = matches.getFirst().getStruct(1);
                assertEquals(t.getValue().get("dtype").asText(), tensor.getString(2));
                List<Integer> shape = new ArrayList<>();
                t.getValue().get("shape").forEach(n -> shape.add(n.asInt()));
                assertEquals(shape, shape(tensor));
            }
        }
        assertEquals(total, rows.size());

        // wide: columns from the first file; model_b lacks most of them.
        Dataset<Row> wide = read(dir);
        assertEquals(2, wide.count());
        assertEquals(7, wide.schema().fields().length);
        assertEquals(1, wide.where(col("bias").isNull()).count());
        assertEquals(1, wide.where(col("bias.dtype").equalTo("BF16")).count());
    }

    // ------------------------------------------------------------ large files

    @Test
    void filesOver2GiBReadThroughMmapAndRanges() throws Exception {
        long bigBytes = 2_200_000_000L;
        Header h = Header.layout(java.util.Map.of(), List.of(
                new Header.Entry("big", io.github.semyonsinchenko.safetensors.format.Dtype.U8,
                        new long[] {2, bigBytes / 2}),
                new Header.Entry("small", io.github.semyonsinchenko.safetensors.format.Dtype.F32, new long[] {4})),
                true, "big.safetensors");
        Path dir = Files.createDirectories(tmp.resolve("large"));
        Path f = dir.resolve("big.safetensors");
        try (var raf = new java.io.RandomAccessFile(f.toFile(), "rw")) {
            raf.write(h.toBytes());
            raf.setLength(h.fileSize()); // sparse: the big tensor is never written
            raf.seek(h.dataOffset() + h.tensor("small").begin());
            raf.write(le(1f, 2, 3, 4));
        }
        assertTrue(Files.size(f) > (1L << 31));
        for (String path : List.of(dir.toString(), CountingFileSystem.uri(dir))) {
            List<Row> rows = reader().load(path).select(col("small.data"), col("big.shape"), col("big.dtype"))
                    .collectAsList();
            assertEquals(1, rows.size());
            assertArrayEquals(le(1f, 2, 3, 4), (byte[]) rows.getFirst().get(0));
            assertEquals(List.of(2, (int) (bigBytes / 2)), rows.getFirst().getList(1));
            Exception e = assertThrows(Exception.class, () -> reader().load(path).select(col("big.data")).collect());
            assertTrue(stackMessages(e).contains("2 GiB"), stackMessages(e));
        }
    }

    // ------------------------------------------------------------ helpers

    static StructType scanSchema(Dataset<Row> df) {
        var plan = df.queryExecution().optimizedPlan();
        List<StructType> found = new ArrayList<>();
        plan.foreach(node -> {
            if (node instanceof DataSourceV2ScanRelation r) {
                found.add(r.scan().readSchema());
            }
            return null;
        });
        assertEquals(1, found.size(), plan.toString());
        return found.getFirst();
    }

    /** Sum of 8 + N over the .safetensors files of a directory. */
    static long headerBytes(Path dir) throws Exception {
        long sum = 0;
        try (var files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".safetensors")).toList()) {
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
                    sum += Header.read(ch, f.toString()).dataOffset();
                }
            }
        }
        return sum;
    }

    /** The header of the dataset's first shard (manifest order), which the driver checks against the manifest. */
    static long firstShardHeaderBytes(Path dir) throws Exception {
        String first = new com.fasterxml.jackson.databind.ObjectMapper().readTree(dir.resolve("dataset_manifest.json")
                .toFile()).get("shards").get(0).path("shard_path").asText(null);
        if (first == null) {
            first = new com.fasterxml.jackson.databind.ObjectMapper().readTree(dir.resolve("dataset_manifest.json")
                    .toFile()).get("shards").get(0).get("file").asText();
        }
        try (FileChannel ch = FileChannel.open(dir.resolve(first), StandardOpenOption.READ)) {
            return Header.read(ch, first).dataOffset();
        }
    }

    static String stackMessages(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(c.getMessage()).append(" | ");
        }
        return sb.toString();
    }
}
