package io.github.semyonsinchenko.safetensors.spark.write;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.spark.write.ShardCommitMessage.IndexEntry;
import io.github.semyonsinchenko.safetensors.spark.write.ShardCommitMessage.Shard;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.util.HadoopOutputFile;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;

/**
 * {@code _tensor_index.parquet}: one row per tensor (columns in spark/DATASET.md). A single file
 * written on the driver with parquet-hadoop (Spark's own dependency), into a temporary name that
 * is then renamed over the old index.
 */
final class TensorIndexFile {
    private TensorIndexFile() {}

    static final MessageType SCHEMA = Types.buildMessage()
            .required(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("tensor_key")
            .required(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("column")
            .required(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("tensor_name")
            .required(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("file_name")
            .requiredList().requiredElement(PrimitiveTypeName.INT32).named("shape")
            .required(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("dtype")
            .required(PrimitiveTypeName.INT64).named("begin")
            .required(PrimitiveTypeName.INT64).named("end")
            .named("tensor_index");

    static void write(FileSystem fs, Configuration conf, Path root, List<IndexEntry> entries) throws IOException {
        Path tmp = new Path(root, "." + DatasetFiles.INDEX + "." + UUID.randomUUID() + ".tmp");
        SimpleGroupFactory groups = new SimpleGroupFactory(SCHEMA);
        try {
            try (ParquetWriter<Group> w = ExampleParquetWriter.builder(HadoopOutputFile.fromPath(tmp, conf))
                    .withType(SCHEMA)
                    .withConf(conf)
                    .withCompressionCodec(CompressionCodecName.SNAPPY)
                    .withWriteMode(ParquetFileWriter.Mode.CREATE)
                    .build()) {
                for (IndexEntry e : entries) {
                    Group g = groups.newGroup()
                            .append("tensor_key", e.tensorKey())
                            .append("column", e.column())
                            .append("tensor_name", e.tensorName())
                            .append("file_name", e.fileName());
                    Group shape = g.addGroup("shape");
                    for (long d : e.shape()) {
                        shape.addGroup("list").append("element", Math.toIntExact(d));
                    }
                    g.append("dtype", e.dtype()).append("begin", e.begin()).append("end", e.end());
                    w.write(g);
                }
            }
            DatasetFiles.renameOverwrite(fs, tmp, new Path(root, DatasetFiles.INDEX));
        } finally {
            fs.delete(tmp, false);
        }
    }

    static List<IndexEntry> read(Configuration conf, Path root) throws IOException {
        List<IndexEntry> out = new ArrayList<>();
        try (ParquetReader<Group> r = ParquetReader.builder(new GroupReadSupport(), new Path(root, DatasetFiles.INDEX))
                .withConf(conf).build()) {
            for (Group g = r.read(); g != null; g = r.read()) {
                Group shapeGroup = g.getGroup("shape", 0);
                long[] shape = new long[shapeGroup.getFieldRepetitionCount("list")];
                for (int i = 0; i < shape.length; i++) {
                    shape[i] = shapeGroup.getGroup("list", i).getInteger("element", 0);
                }
                out.add(new IndexEntry(g.getString("tensor_key", 0), g.getString("column", 0),
                        g.getString("tensor_name", 0), g.getString("file_name", 0), shape, g.getString("dtype", 0),
                        g.getLong("begin", 0), g.getLong("end", 0)));
            }
        }
        return out;
    }

    /** Index entries rebuilt from the shards' headers (for a dataset written without an index). */
    static List<IndexEntry> fromShards(FileSystem fs, Path root, List<Shard> shards, Manifest manifest)
            throws IOException {
        List<String> columns = List.copyOf(manifest.schema().keySet());
        boolean kv = "kv".equals(manifest.writeMode());
        List<IndexEntry> out = new ArrayList<>();
        for (Shard s : shards) {
            Path p = new Path(root, s.file());
            Header h;
            try (InputStream in = fs.open(p)) {
                h = Header.read(in, fs.getFileStatus(p).getLen(), p.toString());
            }
            for (TensorInfo t : h.tensors()) {
                String name = t.name();
                String key;
                String column;
                if (!kv) {
                    column = name.substring(0, name.lastIndexOf('/'));
                    key = column;
                } else if (columns.size() == 1) {
                    column = columns.get(0);
                    key = name;
                } else {
                    column = columns.stream().filter(c -> name.endsWith("/" + c)).findFirst()
                            .orElseThrow(() -> new IOException(p + ": tensor '" + name + "' matches no column of "
                                    + columns));
                    key = name.substring(0, name.length() - column.length() - 1);
                }
                out.add(new IndexEntry(key, column, name, s.file(), t.shape(), t.dtype().name(),
                        h.dataOffset() + t.begin(), h.dataOffset() + t.end()));
            }
        }
        return out;
    }
}
