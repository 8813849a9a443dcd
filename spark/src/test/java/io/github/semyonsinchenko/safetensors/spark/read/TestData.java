package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Small datasets laid out as {@code format/dataset.md} says, written with the core writer and a
 * hand-written manifest (and, optionally, an index written with Spark).
 */
final class TestData {
    static final String UUID = "0f0e5a7a-0000-4000-8000-000000000001";

    private TestData() {}

    static String shard(int task) {
        return String.format("part-%05d-%s.safetensors", task, UUID);
    }

    // ------------------------------------------------------------ values

    /** Sample i of the batch dataset: image F32[2,2], label I64. */
    static float[] image(int i) {
        return new float[] {i, i + 0.5f, i + 1, i + 1.5f};
    }

    static long label(int i) {
        return i * 10L;
    }

    /** Row k of the kv dataset: image F32[2], label I64 (k6 has no label). */
    static float[] kvImage(int k) {
        return new float[] {k, -k};
    }

    static long kvLabel(int k) {
        return k * 100L;
    }

    static byte[] le(float... v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : v) {
            b.putFloat(f);
        }
        return b.array();
    }

    static byte[] le(long... v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 8).order(ByteOrder.LITTLE_ENDIAN);
        for (long l : v) {
            b.putLong(l);
        }
        return b.array();
    }

    // ------------------------------------------------------------ plain files

    /** a: x F32[2,3], y I64[4]; b: x F32[2,3], z F16[2]. */
    static Path plain(Path dir) throws IOException {
        Files.createDirectories(dir);
        new SafetensorsWriter()
                .add("x", Dtype.F32, new long[] {2, 3}, new float[] {0, 1, 2, 3, 4, 5})
                .add("y", Dtype.I64, new long[] {4}, new long[] {7, 8, 9, 10})
                .write(dir.resolve("a.safetensors"));
        new SafetensorsWriter()
                .add("x", Dtype.F32, new long[] {2, 3}, new float[] {6, 7, 8, 9, 10, 11})
                .add("z", Dtype.F16, new long[] {2}, new short[] {0x3c00, 0x4000})
                .write(dir.resolve("b.safetensors"));
        return dir;
    }

    // ------------------------------------------------------------ batch mode

    /** 7 samples: shard 0 holds batches of 3 and 2, shard 1 one batch of 2. */
    static Path batch(Path dir) throws IOException {
        return batch(dir, false);
    }

    /**
     * With {@code padded}, shard 1's batch holds a third, all-zero row (tail_strategy=pad), which
     * the manifest's samples_count (2) leaves out.
     */
    static Path batch(Path dir, boolean padded) throws IOException {
        Files.createDirectories(dir);
        int[][][] layout = {{{0, 3}, {3, 2}}, {{5, 2}}};
        for (int s = 0; s < layout.length; s++) {
            SafetensorsWriter w = new SafetensorsWriter();
            for (int b = 0; b < layout[s].length; b++) {
                int start = layout[s][b][0];
                int real = layout[s][b][1];
                int n = padded && s == 1 ? 3 : real;
                float[] img = new float[n * 4];
                long[] lab = new long[n];
                for (int i = 0; i < real; i++) {
                    System.arraycopy(image(start + i), 0, img, i * 4, 4);
                    lab[i] = label(start + i);
                }
                String suffix = String.format("/%06d", b);
                w.add("image" + suffix, Dtype.F32, new long[] {n, 2, 2}, img);
                w.add("label" + suffix, Dtype.I64, new long[] {n}, lab);
            }
            w.write(dir.resolve(shard(s)));
        }
        manifest(dir, "batch", "{\"image\": {\"dtype\": \"F32\", \"shape\": [2, 2]}, \"label\": {\"dtype\": \"I64\","
                + " \"shape\": []}}", 7, List.of(shard(0), shard(1)), List.of(5L, 2L), false, "");
        return dir;
    }

    // ------------------------------------------------------------ kv mode

    /** Keys k0..k6 over three shards (k0-k2, k3-k4, k5-k6); k6 has no label. */
    static Path kv(Path dir) throws IOException {
        Files.createDirectories(dir);
        int[][] shards = {{0, 1, 2}, {3, 4}, {5, 6}};
        List<String> names = new ArrayList<>();
        for (int s = 0; s < shards.length; s++) {
            SafetensorsWriter w = new SafetensorsWriter();
            for (int k : shards[s]) {
                w.add("k" + k + "/image", Dtype.F32, new long[] {2}, kvImage(k));
                if (k != 6) {
                    w.add("k" + k + "/label", Dtype.I64, new long[] {}, new long[] {kvLabel(k)});
                }
            }
            w.write(dir.resolve(shard(s)));
            names.add(shard(s));
        }
        manifest(dir, "kv", "{\"image\": {\"dtype\": \"F32\", \"shape\": [2]}, \"label\": {\"dtype\": \"I64\","
                + " \"shape\": []}}", 7, names, false, "");
        return dir;
    }

    /** One serialized column "emb": tensor name = key; a, b in shard 0, c in shard 1. */
    static Path kvSingle(Path dir) throws IOException {
        Files.createDirectories(dir);
        new SafetensorsWriter()
                .add("a", Dtype.F32, new long[] {3}, new float[] {1, 2, 3})
                .add("b", Dtype.F32, new long[] {3}, new float[] {4, 5, 6})
                .write(dir.resolve(shard(0)));
        new SafetensorsWriter()
                .add("c", Dtype.F32, new long[] {3}, new float[] {7, 8, 9})
                .write(dir.resolve(shard(1)));
        manifest(dir, "kv", "{\"emb\": {\"dtype\": \"F32\", \"shape\": [3]}}", 3, List.of(shard(0), shard(1)), false, "");
        return dir;
    }

    static void manifest(Path dir, String mode, String schema, long samples, List<String> shards, boolean index,
                         String extra) throws IOException {
        manifest(dir, mode, schema, samples, shards, null, index, extra);
    }

    static void manifest(Path dir, String mode, String schema, long samples, List<String> shards,
                         List<Long> perShard, boolean index, String extra) throws IOException {
        StringBuilder sh = new StringBuilder();
        long total = 0;
        for (int i = 0; i < shards.size(); i++) {
            String s = shards.get(i);
            long size = Files.size(dir.resolve(s));
            total += size;
            sh.append(sh.isEmpty() ? "" : ", ").append("{\"file\": \"").append(s).append("\", \"samples_count\": ")
                    .append(perShard == null ? 0 : perShard.get(i)).append(',')
                    .append(" \"bytes\": ").append(size).append('}');
        }
        String json = "{\"format_version\": \"1\", \"safetensors_version\": \"0.8\", \"created_by\": \"test\","
                + " \"write_mode\": \"" + mode + "\", \"total_samples\": " + samples + ", \"total_bytes\": " + total
                + ", \"schema\": " + schema + ", \"shards\": [" + sh + "]"
                + (index ? ", \"index\": {\"file\": \"_tensor_index.parquet\"}" : "") + extra + "}";
        Files.writeString(dir.resolve("dataset_manifest.json"), json);
    }

    static final StructType INDEX_SCHEMA = new StructType()
            .add("tensor_key", DataTypes.StringType, false)
            .add("column", DataTypes.StringType, false)
            .add("tensor_name", DataTypes.StringType, false)
            .add("file_name", DataTypes.StringType, false)
            .add("shape", DataTypes.createArrayType(DataTypes.IntegerType, false), false)
            .add("dtype", DataTypes.StringType, false)
            .add("begin", DataTypes.LongType, false)
            .add("end", DataTypes.LongType, false);

    /**
     * Writes {@code _tensor_index.parquet} for a kv dataset whose tensors are {@code <key>/<column>}:
     * one Parquet file (as the write path does), or with {@code asDirectory} a directory of part
     * files (as Spark would write it).
     */
    static void kvIndex(SparkSession spark, Path dir, List<String> columns) throws IOException {
        kvIndex(spark, dir, columns, false);
    }

    static void kvIndex(SparkSession spark, Path dir, List<String> columns, boolean asDirectory) throws IOException {
        List<Row> rows = new ArrayList<>();
        try (var files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".safetensors")).sorted().toList()) {
                Header h;
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
                    h = Header.read(ch, f.toString());
                }
                for (TensorInfo t : h.tensors()) {
                    String key = t.name();
                    String column = columns.getFirst();
                    if (columns.size() > 1) {
                        int slash = key.lastIndexOf('/');
                        column = key.substring(slash + 1);
                        key = key.substring(0, slash);
                    }
                    List<Integer> shape = new ArrayList<>();
                    for (long d : t.shape()) {
                        shape.add((int) d);
                    }
                    rows.add(RowFactory.create(key, column, t.name(), f.getFileName().toString(),
                            scala.jdk.javaapi.CollectionConverters.asScala(shape).toSeq(), t.dtype().name(),
                            h.dataOffset() + t.begin(), h.dataOffset() + t.end()));
                }
            }
        }
        Path target = dir.resolve("_tensor_index.parquet");
        Path written = asDirectory ? target : dir.resolve("index-tmp");
        spark.createDataFrame(rows, INDEX_SCHEMA).coalesce(1).write().parquet(written.toString());
        if (!asDirectory) {
            try (var parts = Files.list(written)) {
                Path part = parts.filter(p -> p.getFileName().toString().endsWith(".parquet")).findFirst().orElseThrow();
                Files.move(part, target);
            }
            try (var rest = Files.walk(written)) {
                for (Path p : rest.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        // Rewrite the manifest with its index entry.
        Path m = dir.resolve("dataset_manifest.json");
        String json = Files.readString(m);
        Files.writeString(m, json.substring(0, json.length() - 1) + ", \"index\": {\"file\":"
                + " \"_tensor_index.parquet\"}}");
    }
}
