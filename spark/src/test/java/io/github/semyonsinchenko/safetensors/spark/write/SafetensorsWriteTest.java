package io.github.semyonsinchenko.safetensors.spark.write;

import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.allFiles;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.manifest;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.shards;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.tensors;
import static io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.tensorsByFile;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.spark.write.WriteTestSupport.Read;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The write path in local mode: layouts, encodings, SaveModes, manifest. One session for the class. */
class SafetensorsWriteTest {
    static SparkSession spark;

    @TempDir
    Path tmp;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[2]").appName("safetensors-write-test")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .getOrCreate();
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    /** id, key 'k<id>', vec = [id*10, id*10+1, id*10+2] as float; 2 partitions. */
    static Dataset<Row> floats(int n) {
        return spark.range(0, n, 1, 2).selectExpr("id", "concat('k', id) as key",
                "transform(sequence(0, 2), i -> cast(id * 10 + i as float)) as vec");
    }

    /** The given __metadata__ entries of the first shard. */
    static Map<String, String> shardMeta(Path root, String... keys) throws Exception {
        try (var f = io.github.semyonsinchenko.safetensors.io.SafetensorsFile.open(shards(root).get(0))) {
            Map<String, String> out = new java.util.HashMap<>();
            for (String k : keys) {
                out.put(k, f.metadata().get(k));
            }
            return out;
        }
    }

    static float[] floatsOf(byte[] b) {
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        float[] out = new float[b.length / 4];
        for (int i = 0; i < out.length; i++) {
            out[i] = bb.getFloat();
        }
        return out;
    }

    @Test
    void kvModeOneColumnNamesTensorsByKey() throws Exception {
        Path out = tmp.resolve("kv");
        floats(10).drop("id").write().format("safetensors").option("name_col", "key").save(out.toString());

        Map<String, Read> t = tensors(out);
        assertEquals(10, t.size());
        for (int i = 0; i < 10; i++) {
            Read r = t.get("k" + i + "__vec"); // the original's <key>__<column>, also for one column
            assertEquals("F32", r.dtype());
            assertArrayEquals(new long[] {3}, r.shape());
            assertArrayEquals(new float[] {i * 10, i * 10 + 1, i * 10 + 2}, floatsOf(r.bytes()));
        }
        JsonNode m = manifest(out);
        assertEquals("kv", m.get("write_mode").asText());
        assertEquals("1.0", m.get("format_version").asText());
        assertEquals("1.0", m.get("safetensors_version").asText());
        assertEquals("__", m.get("kv_separator").asText());
        assertEquals(10, m.get("total_samples").asLong());
        assertEquals(Map.of("write_mode", "kv", "name_col", "key", "kv_separator", "__"),
                shardMeta(out, "write_mode", "name_col", "kv_separator"));
        assertEquals("F32", m.get("schema").get("vec").get("dtype").asText());
        assertEquals("[3]", m.get("schema").get("vec").get("shape").toString());
        long bytes = 0;
        for (JsonNode s : m.get("shards")) {
            Path f = out.resolve(s.get("shard_path").asText());
            assertEquals(Files.size(f), s.get("bytes").asLong());
            assertTrue(s.get("shard_path").asText().matches("part-0000[01]-0000-[0-9a-f-]{36}\\.safetensors"),
                    s.toString());
            bytes += s.get("bytes").asLong();
        }
        assertEquals(bytes, m.get("total_bytes").asLong());
        assertFalse(Files.exists(out.resolve(DatasetLayout.STAGING)), "staging removed");
    }

    @Test
    void kvModeSeveralColumnsUseKeySeparatorColumn() throws Exception {
        Path out = tmp.resolve("kv2");
        floats(4).selectExpr("key", "vec", "array(id, id + 1) as ids").write().format("safetensors")
                .option("name_col", "key").save(out.toString());
        Map<String, Read> t = tensors(out);
        assertEquals(8, t.size());
        assertEquals("I64", t.get("k3__ids").dtype());
        assertArrayEquals(new float[] {30, 31, 32}, floatsOf(t.get("k3__vec").bytes()));

        Path sep = tmp.resolve("kv-sep");
        floats(2).selectExpr("key", "vec").write().format("safetensors").option("name_col", "key")
                .option("kv_separator", "::").save(sep.toString());
        assertEquals(java.util.Set.of("k0::vec", "k1::vec"), tensors(sep).keySet());
        assertEquals("::", manifest(sep).get("kv_separator").asText());
    }

    @Test
    void kvRowsOfAColumnMayDifferInShapeUnlessShapesIsGiven() throws Exception {
        Path out = tmp.resolve("kv-ragged");
        Dataset<Row> ragged = spark.sql("select 'a' as key, array(1.0f) as v union all select 'b', array(1.0f, 2.0f)");
        ragged.write().format("safetensors").option("name_col", "key").save(out.toString());
        assertArrayEquals(new long[] {1}, tensors(out).get("a__v").shape());
        assertArrayEquals(new long[] {2}, tensors(out).get("b__v").shape());
        assertEquals("F32", manifest(out).get("schema").get("v").get("dtype").asText());
        assertFalse(manifest(out).get("schema").get("v").has("shape"), "shapes vary: no per-sample shape");
        List<Row> back = spark.read().format("safetensors").option("inferSchema", "true").load(out.toString())
                .orderBy("tensor_key").selectExpr("tensor_key", "v.shape").collectAsList();
        assertEquals(List.of("a", "b"), back.stream().map(r -> r.getString(0)).toList());
        assertEquals(List.of(List.of(1), List.of(2)), back.stream().map(r -> r.getList(1)).toList());
        Exception e = assertThrows(Exception.class, () -> ragged.write().format("safetensors")
                .option("name_col", "key").option("shapes", "{\"v\": [2]}").save(tmp.resolve("kv-shapes").toString()));
        assertTrue(causes(e).contains("'v'"), causes(e));
    }

    @Test
    void kvColumnsThatCouldNotBeToldApartAreRejected() {
        AnalysisException e = assertThrows(AnalysisException.class, () -> spark.sql(
                        "select 'a' as key, array(1.0f) as c, array(2.0f) as b__c")
                .write().format("safetensors").option("name_col", "key").save(tmp.resolve("amb").toString()));
        assertTrue(e.getMessage().contains("'b__c' and 'c'"), e.getMessage());
    }

    @Test
    void batchModeStacksRowsAndWritesTheTail() throws Exception {
        Path out = tmp.resolve("batch");
        // one partition so the batch contents are deterministic
        floats(10).coalesce(1).select("vec").write().format("safetensors").option("batch_size", "4")
                .save(out.toString());
        // One standalone file per batch, its tensor named after the column (the original's layout).
        Map<String, Read> t = tensorsByFile(out);
        List<String> files = shards(out).stream().map(p -> p.getFileName().toString()).toList();
        assertEquals(3, files.size());
        for (int b = 0; b < 3; b++) {
            String f = files.get(b);
            assertTrue(f.matches("part-00000-000" + b + "-[0-9a-f-]{36}\\.safetensors"), files.toString());
            assertEquals(List.of("vec"), t.keySet().stream().filter(k -> k.startsWith(f)).map(
                    k -> k.substring(k.indexOf("::") + 2)).toList());
        }
        assertArrayEquals(new long[] {4, 3}, t.get(files.get(0) + "::vec").shape());
        assertArrayEquals(new long[] {2, 3}, t.get(files.get(2) + "::vec").shape());
        float[] last = floatsOf(t.get(files.get(2) + "::vec").bytes());
        assertArrayEquals(new float[] {80, 81, 82, 90, 91, 92}, last);
        JsonNode m = manifest(out);
        assertEquals(10, m.get("total_samples").asLong());
        assertEquals(List.of(4L, 4L, 2L), java.util.stream.StreamSupport.stream(m.get("shards").spliterator(), false)
                .map(s -> s.get("samples_count").asLong()).toList());
        assertEquals(Map.of("write_mode", "batch", "batch_size", "4", "tail_strategy", "write", "pack_batches", "false"),
                shardMeta(out, "write_mode", "batch_size", "tail_strategy", "pack_batches"));
        assertEquals(java.util.Set.of("format_version", "safetensors_version", "created_by", "write_mode",
                "total_samples", "total_bytes", "schema", "shards", "version", "commit_id", "batch_size",
                "tail_strategy", "pack_batches"), java.util.stream.StreamSupport.stream(((Iterable<String>) m::fieldNames).spliterator(), false).collect(java.util.stream.Collectors.toSet()));
        assertEquals(4, m.get("batch_size").asInt());
    }

    @Test
    void packBatchesPutsSeveralBatchesInOneFile() throws Exception {
        Path out = tmp.resolve("packed");
        floats(10).coalesce(1).select("vec").write().format("safetensors").option("batch_size", "4")
                .option("pack_batches", "true").save(out.toString());
        Map<String, Read> t = tensors(out);
        assertEquals(List.of("vec/000000", "vec/000001", "vec/000002"), t.keySet().stream().sorted().toList());
        assertEquals(1, shards(out).size());
        assertArrayEquals(new long[] {2, 3}, t.get("vec/000002").shape());
        assertTrue(manifest(out).get("pack_batches").asBoolean());
        List<Row> back = spark.read().format("safetensors").option("inferSchema", "true").option("unbatch", "true")
                .load(out.toString()).collectAsList();
        assertEquals(10, back.size());
    }

    @Test
    void batchTailDropAndPad() throws Exception {
        Path drop = tmp.resolve("drop");
        floats(10).coalesce(1).select("vec").write().format("safetensors").option("batch_size", "4")
                .option("tail_strategy", "drop").save(drop.toString());
        assertEquals(2, tensorsByFile(drop).size());
        assertEquals(8, manifest(drop).get("total_samples").asLong());

        Path pad = tmp.resolve("pad");
        floats(10).coalesce(1).select("vec").write().format("safetensors").option("batch_size", "4")
                .option("tail_strategy", "pad").save(pad.toString());
        Path lastFile = shards(pad).get(2);
        Read r = tensorsByFile(pad).get(lastFile.getFileName() + "::vec");
        assertArrayEquals(new long[] {4, 3}, r.shape());
        assertArrayEquals(new float[] {80, 81, 82, 90, 91, 92, 0, 0, 0, 0, 0, 0}, floatsOf(r.bytes()));
        assertEquals(10, manifest(pad).get("total_samples").asLong());
        assertEquals(2, manifest(pad).get("shards").get(2).get("samples_count").asLong(), "padding is not counted");
    }

    @Test
    void tensorStructIsWrittenVerbatimAndConvertedToBf16() throws Exception {
        Path out = tmp.resolve("struct");
        // F32 1.0, 2.5 and 1+2^-8 (ties to even in BF16) as raw little-endian bytes
        Dataset<Row> df = spark.sql("select 'a' as key, named_struct('data', unhex('0000803F00002040'), "
                + "'shape', array(2), 'dtype', 'F32') as t union all select 'b', named_struct('data', "
                + "unhex('0080803F0000C07F'), 'shape', array(1, 2), 'dtype', 'F32')");
        df.write().format("safetensors").option("name_col", "key").option("shapes", "{\"t\": [2]}")
                .save(out.toString());
        Map<String, Read> t = tensors(out);
        assertArrayEquals(hex("0000803F00002040"), t.get("a__t").bytes());
        assertArrayEquals(new long[] {2}, t.get("b__t").shape());

        Path bf = tmp.resolve("struct-bf16");
        df.write().format("safetensors").option("name_col", "key").option("dtype", "bf16")
                .option("shapes", "{\"t\": [2]}").save(bf.toString());
        Map<String, Read> b = tensors(bf);
        assertEquals("BF16", b.get("a__t").dtype());
        assertArrayEquals(hex("803F2040"), b.get("a__t").bytes());
        // 1+2^-8 is a tie: rounds to even 1.0 (0x3F80); NaN stays a quiet NaN
        assertArrayEquals(hex("803FC07F"), b.get("b__t").bytes());
    }

    static byte[] hex(String s) {
        return java.util.HexFormat.of().parseHex(s);
    }

    @Test
    void numericArraysAreEncodedIntoTheTargetDtype() throws Exception {
        Path out = tmp.resolve("enc");
        spark.sql("select 'a' as key, array(1, 255) as i, array(cast(1.0 as double), 65504.0, 1e-8) as d, "
                        + "array(array(1, 2), array(3, 4)) as m")
                .write().format("safetensors").option("name_col", "key").option("columns", "i")
                .option("dtype", "U8").save(out.toString());
        assertArrayEquals(new byte[] {1, (byte) 255}, tensors(out).get("a__i").bytes());

        Path f16 = tmp.resolve("f16");
        spark.sql("select 'a' as key, array(cast(1.0 as double), 65504.0, 1e-8, 70000.0) as d")
                .write().format("safetensors").option("name_col", "key").option("dtype", "F16").save(f16.toString());
        byte[] h = tensors(f16).get("a__d").bytes();
        ByteBuffer bb = ByteBuffer.wrap(h).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(Float.floatToFloat16(1.0f), bb.getShort());
        assertEquals((short) 0x7BFF, bb.getShort());
        assertEquals(Float.floatToFloat16(1e-8f), bb.getShort());
        assertEquals((short) 0x7C00, bb.getShort()); // overflow to +inf

        Path nested = tmp.resolve("nested");
        spark.sql("select 'a' as key, array(array(1, 2, 3), array(4, 5, 6)) as m")
                .write().format("safetensors").option("name_col", "key").save(nested.toString());
        Read r = tensors(nested).get("a__m");
        assertArrayEquals(new long[] {2, 3}, r.shape());
        assertEquals("I32", r.dtype());
    }

    @Test
    void integerOutOfRangeIsATaskErrorNamingColumnAndKey() throws Exception {
        Path out = tmp.resolve("range");
        Exception e = assertThrows(Exception.class, () -> spark.sql("select 'row7' as key, array(1, 300) as i")
                .write().format("safetensors").option("name_col", "key").option("dtype", "U8").save(out.toString()));
        assertTrue(causes(e).contains("column 'i', row key 'row7': value 300 does not fit U8"), causes(e));
        assertTrue(allFiles(out).isEmpty() || !Files.exists(out.resolve(DatasetLayout.MANIFEST)));
    }

    static String causes(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            sb.append(t.getMessage()).append('\n');
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ SaveModes

    @Test
    void saveModes() throws Exception {
        Path out = tmp.resolve("modes");
        String p = out.toString();
        floats(6).select("key", "vec").write().format("safetensors").option("name_col", "key").save(p);
        JsonNode first = manifest(out);

        // errorIfExists (default) refuses, and leaves the dataset alone
        AnalysisException e = assertThrows(AnalysisException.class, () ->
                floats(6).select("key", "vec").write().format("safetensors").option("name_col", "key").save(p));
        assertTrue(e.getMessage().contains("already holds a safetensors dataset"), e.getMessage());
        assertThrows(AnalysisException.class, () -> floats(6).select("key", "vec").write().format("safetensors")
                .mode("errorifexists").option("name_col", "key").save(p));

        // ignore: no-op
        floats(3).select("key", "vec").write().format("safetensors").mode("ignore").option("name_col", "key").save(p);
        assertEquals(first, manifest(out));

        // append: shards and totals merged
        spark.range(100, 104, 1, 2).selectExpr("concat('k', id) as key", "array(cast(id as float), 0.0f, 0.0f) as vec")
                .write().format("safetensors").mode("append").option("name_col", "key").save(p);
        JsonNode appended = manifest(out);
        assertEquals(10, appended.get("total_samples").asLong());
        assertEquals(first.get("shards").size() + 2, appended.get("shards").size());
        assertEquals(10, tensors(out).size());
        assertTrue(WriteTestSupport.names(appended.get("shards")).containsAll(WriteTestSupport.names(first.get("shards"))));

        // overwrite: only the new data
        floats(2).select("key", "vec").write().format("safetensors").mode("overwrite").option("name_col", "key").save(p);
        assertEquals(2, manifest(out).get("total_samples").asLong());
        assertEquals(2, tensors(out).size());
        assertEquals(3, manifest(out).get("version").asLong()); // write, append, overwrite
        // The previous version's shards stay (retain_versions=1) for readers that resolved it.
        java.util.Set<String> kept = new java.util.TreeSet<>(WriteTestSupport.names(manifest(out).get("shards")));
        kept.addAll(WriteTestSupport.names(appended.get("shards")));
        assertEquals(kept, new java.util.TreeSet<>(WriteTestSupport.shardFilesOnDisk(out).stream()
                .map(f -> f.getFileName().toString()).toList()));

        // ignore and errorIfExists on a fresh path write
        Path fresh = tmp.resolve("fresh");
        floats(2).select("key", "vec").write().format("safetensors").mode("ignore").option("name_col", "key")
                .save(fresh.toString());
        assertEquals(2, manifest(fresh).get("total_samples").asLong());
    }

    @Test
    void appendMustMatchTheDataset() throws Exception {
        Path out = tmp.resolve("mismatch");
        String p = out.toString();
        floats(4).select("key", "vec").write().format("safetensors").option("name_col", "key").save(p);
        AnalysisException e = assertThrows(AnalysisException.class, () -> floats(4).select("vec").write()
                .format("safetensors").mode("append").option("batch_size", "2").save(p));
        assertTrue(e.getMessage().contains("written in kv mode"), e.getMessage());
        // kv: each row is its own tensor, so only the dtype must match
        spark.sql("select 'zz' as key, array(1.0f) as vec").write().format("safetensors").mode("append")
                .option("name_col", "key").save(p);
        assertFalse(manifest(out).get("schema").get("vec").has("shape"), "shapes now vary");
        Exception dtype = assertThrows(Exception.class, () -> spark.sql("select 'zy' as key, array(1) as vec")
                .write().format("safetensors").mode("append").option("name_col", "key").save(p));
        assertTrue(causes(dtype).contains("column 'vec' is I32 [1] but the dataset has F32"), causes(dtype));
        // batch: every batch of a column has the same per-sample shape
        Path batch = tmp.resolve("mismatch-batch");
        floats(4).select("vec").write().format("safetensors").option("batch_size", "2").save(batch.toString());
        Exception shape = assertThrows(Exception.class, () -> spark.sql("select array(1.0f) as vec")
                .write().format("safetensors").mode("append").option("batch_size", "2").save(batch.toString()));
        assertTrue(causes(shape).contains("column 'vec' is F32 [1] but the dataset has F32 [3]"), causes(shape));
    }

    // ------------------------------------------------------------------ option validation

    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> badOptions() {
        return java.util.stream.Stream.of(
                args(Map.of(), "set exactly one of 'batch_size'"),
                args(Map.of("batch_size", "2", "name_col", "key"), "got both"),
                args(Map.of("batch_size", "0"), "'batch_size' is '0'; allowed: a whole number of rows at least 1"),
                args(Map.of("batch_size", "x"), "'batch_size' is 'x'"),
                args(Map.of("name_col", "nope"), "'name_col' names column 'nope', which does not exist"),
                args(Map.of("name_col", "id"), "the key column must be a string"),
                args(Map.of("name_col", "key", "columns", "vec,,id"), "empty column name"),
                args(Map.of("name_col", "key", "columns", "vec,vec"), "lists 'vec' twice"),
                args(Map.of("name_col", "key", "columns", "key"), "lists the key column"),
                args(Map.of("name_col", "key", "columns", "str"), "column 'str' is string, which cannot be written"),
                args(Map.of("name_col", "key", "columns", "vec", "dtype", "I32"), "floating-point values are never truncated"),
                args(Map.of("name_col", "key", "dtype", "F8"), "'dtype' is 'F8'; allowed: F16, BF16"),
                args(Map.of("name_col", "key", "columns", "vec", "shapes", "{bad"), "'shapes' is not valid JSON"),
                args(Map.of("name_col", "key", "columns", "vec", "shapes", "{\"zz\": [3]}"), "'shapes' names 'zz'"),
                args(Map.of("name_col", "key", "columns", "vec", "shapes", "{\"vec\": [-1]}"), "non-negative integers"),
                args(Map.of("name_col", "key", "columns", "vec", "tail_strategy", "pad"), "'tail_strategy' applies to batch mode"),
                args(Map.of("batch_size", "2", "columns", "vec", "duplicatesStrategy", "fail"), "'duplicatesStrategy' applies to key-value mode"),
                args(Map.of("batch_size", "2", "columns", "vec", "tail_strategy", "cut"), "allowed: write (default), drop, pad"),
                args(Map.of("name_col", "key", "columns", "vec", "duplicatesStrategy", "first"), "allowed: fail (default), lastWin"),
                args(Map.of("name_col", "key", "columns", "vec", "generate_index", "yes"), "allowed: true, false"),
                args(Map.of("name_col", "key", "columns", "vec", "target_shard_size_mb", "49"), "a whole number of MiB from 50 to 1000 (default 300)"),
                args(Map.of("name_col", "key", "columns", "vec", "target_shard_size_mb", "1001"), "a whole number of MiB from 50 to 1000"),
                args(Map.of("name_col", "key", "columns", "vec,x__vec"), "columns 'x__vec' and 'vec'"),
                args(Map.of("name_col", "key", "columns", "vec,x__vec", "kv_separator", "_"), "columns 'x__vec' and 'vec'"),
                args(Map.of("batch_size", "2", "columns", "vec", "kv_separator", "_"), "'kv_separator' applies to key-value mode"),
                args(Map.of("name_col", "key", "columns", "vec", "pack_batches", "true"), "'pack_batches' applies to batch mode"),
                args(Map.of("batch_size", "2", "columns", "vec", "pack_batches", "yes"), "allowed: true, false"),
                args(Map.of("batch_size", "2", "columns", "vec,vec/000001", "pack_batches", "true"), "looks like batch 000001"));
    }

    static org.junit.jupiter.params.provider.Arguments args(Map<String, String> options, String message) {
        return org.junit.jupiter.params.provider.Arguments.of(options, message);
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.MethodSource("badOptions")
    void invalidOptionsFailAtPlanTimeWithAnAnalysisException(Map<String, String> options, String message) {
        Path out = tmp.resolve("bad");
        Dataset<Row> df = floats(2).selectExpr("id", "key", "vec", "'s' as str", "vec as `x__vec`", "vec as `vec/000001`");
        AnalysisException e = assertThrows(AnalysisException.class,
                () -> df.write().format("safetensors").options(options).save(out.toString()));
        assertTrue(e.getMessage().contains(message), e.getMessage());
        assertFalse(Files.exists(out.resolve(DatasetLayout.STAGING)), "no task ran");
    }

    @Test
    void rowsOfAColumnMustAgreeAndNullsAreRejected() {
        // Shapes may differ (BatchShapesTest), dtypes may not.
        Exception dtype = assertThrows(Exception.class, () -> spark.sql(
                "select named_struct('data', unhex('0000803F'), 'shape', array(1), 'dtype', 'F32') as v union all "
                        + "select named_struct('data', unhex('01000000'), 'shape', array(1), 'dtype', 'I32')")
                .coalesce(1).write().format("safetensors").option("batch_size", "2").save(tmp.resolve("s").toString()));
        assertTrue(causes(dtype).contains("column 'v', row 2 of partition 0: the tensor is I32 [1] but earlier rows of"
                + " this column are F32 [1]; every row of a column must have the same dtype"), causes(dtype));
        Exception nul = assertThrows(Exception.class, () -> spark.sql(
                "select 'a' as key, array(1.0f, null) as v").write().format("safetensors")
                .option("name_col", "key").save(tmp.resolve("n").toString()));
        assertTrue(causes(nul).contains("column 'v', row key 'a': the array contains null elements"), causes(nul));
        Exception relabel = assertThrows(Exception.class, () -> spark.sql(
                "select 'a' as key, named_struct('data', unhex('01000000'), 'shape', array(1), 'dtype', 'I32') as t")
                .write().format("safetensors").option("name_col", "key").option("dtype", "F16")
                .save(tmp.resolve("r").toString()));
        assertTrue(causes(relabel).contains("never relabeled"), causes(relabel));
    }

    // ------------------------------------------------------------------ duplicates and index

    @Test
    void duplicateKeysFailInATaskOrLastOneWins() throws Exception {
        Dataset<Row> dup = spark.sql("select 'a' as key, array(1.0f) as v union all select 'a', array(2.0f)")
                .coalesce(1);
        Path fail = tmp.resolve("dupfail");
        Exception e = assertThrows(Exception.class, () -> dup.write().format("safetensors")
                .option("name_col", "key").save(fail.toString()));
        assertTrue(causes(e).contains("duplicate key 'a' in column 'key'"), causes(e));
        assertEquals(List.of(), allFiles(fail));

        Path last = tmp.resolve("duplast");
        dup.write().format("safetensors").option("name_col", "key").option("duplicatesStrategy", "lastWin")
                .save(last.toString());
        assertArrayEquals(new float[] {2.0f}, floatsOf(tensors(last).get("a__v").bytes()));
        assertEquals(1, manifest(last).get("total_samples").asLong());
    }

    @Test
    void duplicateKeysAcrossTasksFailAtCommitWithTheIndex() throws Exception {
        Dataset<Row> twoTasks = spark.range(0, 2, 1, 2).selectExpr("'a' as key", "array(cast(id as float)) as v");
        Path withIndex = tmp.resolve("dupidx");
        Exception e = assertThrows(Exception.class, () -> twoTasks.write().format("safetensors")
                .option("name_col", "key").option("generate_index", "true").save(withIndex.toString()));
        assertTrue(causes(e).contains("key 'a' (column 'v') in part-00000-")
                && causes(e).contains("a key appears more than once in the dataset"), causes(e));
        assertEquals(List.of(), allFiles(withIndex), "nothing visible, staging removed");

        // Without the index keys are not compared across tasks (documented in format/dataset.md).
        Path noIndex = tmp.resolve("dupnoidx");
        twoTasks.write().format("safetensors").option("name_col", "key").save(noIndex.toString());
        assertEquals(2, shards(noIndex).size());
    }

    @Test
    void indexRoutesEveryKeyToItsFileAndByteRange() throws Exception {
        Path out = tmp.resolve("idx");
        floats(20).selectExpr("key", "vec", "array(id) as ids").write().format("safetensors")
                .option("name_col", "key").option("generate_index", "true").save(out.toString());
        checkIndex(out, 40);
        // The version's own index, and a copy where tools read the index by its directory name.
        String own = manifest(out).get("index").get("file").asText();
        assertTrue(own.startsWith(DatasetLayout.INDEX_VERSIONS + "/") && Files.isRegularFile(out.resolve(own)), own);
        assertArrayEquals(Files.readAllBytes(out.resolve(own)), Files.readAllBytes(out.resolve(DatasetLayout.INDEX_FILE)));

        // append keeps the index complete
        spark.range(100, 110, 1, 2).selectExpr("concat('k', id) as key",
                        "transform(sequence(0, 2), i -> cast(id * 10 + i as float)) as vec", "array(id) as ids")
                .write().format("safetensors").mode("append").option("name_col", "key").save(out.toString());
        checkIndex(out, 60);

        // a dataset without an index gets one on append with generate_index=true (from the shard headers)
        Path late = tmp.resolve("idxlate");
        floats(6).select("key", "vec").write().format("safetensors").option("name_col", "key").save(late.toString());
        spark.range(50, 52).selectExpr("concat('k', id) as key", "array(1.0f, 2.0f, 3.0f) as vec")
                .write().format("safetensors").mode("append").option("name_col", "key")
                .option("generate_index", "true").save(late.toString());
        checkIndex(late, 8);

        // batch mode: tensor_key is the column
        Path batch = tmp.resolve("idxbatch");
        floats(10).select("vec").write().format("safetensors").option("batch_size", "3")
                .option("generate_index", "true").save(batch.toString());
        checkIndex(batch, 4);
    }

    private void checkIndex(Path root, int expectedRows) throws Exception {
        // A directory with one part file: Spark's own reader opens it by its name.
        List<Row> rows = spark.read().parquet(root + "/" + DatasetLayout.INDEX).collectAsList();
        assertEquals(expectedRows, rows.size());
        Map<String, Read> t = WriteTestSupport.tensorsByFile(root);
        assertEquals(expectedRows, t.size());
        for (Row r : rows) {
            Read read = t.get(r.<String>getAs("file_name") + "::" + r.<String>getAs("tensor_name"));
            assertEquals(read.file(), r.getAs("file_name"));
            assertEquals(read.dtype(), r.getAs("dtype"));
            List<Integer> shape = r.getList(r.fieldIndex("shape"));
            assertEquals(java.util.Arrays.stream(read.shape()).boxed().map(Long::intValue).toList(), shape);
            long begin = r.getAs("begin");
            long end = r.getAs("end");
            byte[] slice = java.util.Arrays.copyOfRange(Files.readAllBytes(root.resolve(read.file())), (int) begin,
                    (int) end);
            assertArrayEquals(read.bytes(), slice);
            String name = r.getAs("tensor_name");
            String key = r.getAs("tensor_key");
            String column = r.getAs("column");
            assertTrue(name.equals(key + "__" + column) || key.equals(column) && name.equals(column), r.toString());
        }
    }

    // ------------------------------------------------------------------ shard sizing

    @Test
    void shardsCloseAtTheTargetSize() throws Exception {
        Path out = tmp.resolve("sized");
        // 2 tasks x 130 rows x 1 MiB: with a 50 MiB target each task writes 50, 50 and 30 MiB shards
        spark.range(0, 260, 1, 2).selectExpr("concat('k', id) as key",
                        "array_repeat(cast(id as float), 262144) as vec")
                .write().format("safetensors").option("name_col", "key").option("target_shard_size_mb", "50")
                .save(out.toString());
        JsonNode m = manifest(out);
        assertEquals(260, m.get("total_samples").asLong());
        Map<String, List<Long>> perTask = new java.util.TreeMap<>();
        for (JsonNode s : m.get("shards")) {
            perTask.computeIfAbsent(s.get("shard_path").asText().substring(0, 10), k -> new java.util.ArrayList<>())
                    .add(s.get("bytes").asLong());
        }
        assertEquals(2, perTask.size());
        long target = 50L << 20;
        for (List<Long> sizes : perTask.values()) {
            assertEquals(3, sizes.size(), sizes.toString());
            long full = sizes.stream().filter(b -> b >= 0.8 * target && b <= 1.2 * target).count();
            assertEquals(2, full, "all but the task's last shard within 20% of the target: " + sizes);
        }
    }

    // ------------------------------------------------------------------ issue 8 regressions

    /** Observed 7: an append to a dataset written from an empty DataFrame passed planning, then failed at commit. */
    @Test
    void appendToADatasetWrittenFromAnEmptyDataFrame() throws Exception {
        Path out = tmp.resolve("from-empty");
        floats(0).select("key", "vec").write().format("safetensors").option("name_col", "key").save(out.toString());
        assertEquals(0, manifest(out).get("total_samples").asLong());
        assertEquals(0, manifest(out).get("schema").size());
        floats(5).select("key", "vec").write().format("safetensors").mode("append").option("name_col", "key")
                .save(out.toString());
        assertEquals(5, manifest(out).get("total_samples").asLong());
        assertEquals(List.of("vec"), iterable(manifest(out).get("schema").fieldNames()));
        assertEquals(5, tensors(out).size());
        // The same rule at planning and at commit: a wrong layout still fails before any task runs.
        AnalysisException e = assertThrows(AnalysisException.class, () -> floats(2).select("vec").write()
                .format("safetensors").mode("append").option("batch_size", "2").save(out.toString()));
        assertTrue(e.getMessage().contains("written in kv mode"), e.getMessage());
    }

    /** Observed 8: a manifest without "schema" (the reader accepts it) broke the writer with a NullPointerException. */
    @Test
    void appendToAManifestWithoutSchema() throws Exception {
        Path out = tmp.resolve("no-schema");
        floats(4).select("key", "vec").write().format("safetensors").option("name_col", "key").save(out.toString());
        var m = (com.fasterxml.jackson.databind.node.ObjectNode) manifest(out);
        m.remove("schema");
        Files.write(out.resolve(DatasetLayout.MANIFEST), new com.fasterxml.jackson.databind.ObjectMapper()
                .writeValueAsBytes(m));
        spark.range(10, 12, 1, 1).selectExpr("concat('k', id) as key", "array(1.0f, 2.0f, 3.0f) as vec")
                .write().format("safetensors").mode("append").option("name_col", "key").save(out.toString());
        assertEquals(6, manifest(out).get("total_samples").asLong());
        assertEquals(6, tensors(out).size());
        assertTrue(manifest(out).get("schema").has("vec"));
    }

    /** Observed 9: under a locale with other digits, shard and tensor names must stay ASCII. */
    @Test
    void namesAreAsciiUnderAnArabicDefaultLocale() throws Exception {
        java.util.Locale before = java.util.Locale.getDefault();
        java.util.Locale.setDefault(java.util.Locale.forLanguageTag("ar-EG"));
        try {
            assertEquals("\u0660\u0660\u0667", String.format("%03d", 7), "the locale formats other digits");
            Path kv = tmp.resolve("ar-kv");
            floats(4).select("key", "vec").write().format("safetensors").option("name_col", "key")
                    .save(kv.toString());
            Path batch = tmp.resolve("ar-batch");
            floats(4).select("vec").write().format("safetensors").option("batch_size", "2").save(batch.toString());
            for (Path root : List.of(kv, batch)) {
                for (String f : WriteTestSupport.names(manifest(root).get("shards"))) {
                    assertTrue(f.matches("part-[0-9]{5}-[0-9]{4}-[0-9a-f-]{36}\\.safetensors"), f);
                }
                assertTrue(allFiles(root).stream().allMatch(f -> f.chars().allMatch(c -> c < 128)), allFiles(root)
                        .toString());
            }
            Path packed = tmp.resolve("ar-packed");
            floats(4).select("vec").write().format("safetensors").option("batch_size", "2")
                    .option("pack_batches", "true").save(packed.toString());
            assertTrue(tensorsByFile(packed).keySet().stream().allMatch(k -> k.matches(".*::vec/[0-9]{6}")),
                    tensorsByFile(packed).keySet().toString());
        } finally {
            java.util.Locale.setDefault(before);
        }
    }

    /** A misspelt option is an AnalysisException naming the closest valid one, for writes and reads. */
    @Test
    void misspeltOptionsNameTheClosestValidOne() throws Exception {
        Path out = tmp.resolve("misspelt");
        AnalysisException e = assertThrows(AnalysisException.class, () -> floats(2).select("vec").write()
                .format("safetensors").option("bach_size", "2").save(out.toString()));
        assertTrue(e.getMessage().contains("did you mean 'batch_size'?"), e.getMessage());
        floats(2).select("vec").write().format("safetensors").option("batch_size", "2").save(out.toString());
        // Reads refuse it the same way, while the query is analysed (load infers the schema): no task runs.
        AnalysisException r = assertThrows(AnalysisException.class, () -> spark.read().format("safetensors")
                .option("inferSchema", "true").option("ignoreCorruptFile", "true").load(out.toString()));
        assertTrue(r.getMessage().contains("did you mean 'ignoreCorruptFiles'?"), r.getMessage());
    }

    private static List<String> iterable(java.util.Iterator<String> it) {
        List<String> out = new java.util.ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }
}
