package io.github.semyonsinchenko.safetensors.spark.read;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.api.ReadSupport;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;

/**
 * Driver-side reads of {@code _tensor_index.parquet} (a single Parquet file, or a directory of
 * part files), with parquet-hadoop directly: Spark's own Parquet source would skip a path whose
 * name starts with {@code _}. Only the requested columns are read.
 */
final class TensorIndex {
    private TensorIndex() {}

    /** The dataset files (relative names as in the index) holding any of {@code keys}. */
    static Set<String> filesHoldingKeys(String indexPath, Set<String> keys, Configuration conf) throws IOException {
        Set<String> out = new LinkedHashSet<>();
        scan(indexPath, conf, List.of("tensor_key", "file_name"), g -> {
            if (keys.contains(g.getString("tensor_key", 0))) {
                out.add(g.getString("file_name", 0));
            }
        });
        return out;
    }

    /** The distinct {@code column} values, in order of first appearance. */
    static List<String> columns(String indexPath, Configuration conf) throws IOException {
        Set<String> out = new LinkedHashSet<>();
        scan(indexPath, conf, List.of("column"), g -> out.add(g.getString("column", 0)));
        return new ArrayList<>(out);
    }

    private static void scan(String indexPath, Configuration conf, List<String> columns, Consumer<Group> each)
            throws IOException {
        for (Path part : parts(new Path(indexPath), conf)) {
            MessageType fileSchema;
            try (ParquetFileReader r = ParquetFileReader.open(HadoopInputFile.fromPath(part, conf))) {
                fileSchema = r.getFooter().getFileMetaData().getSchema();
            }
            List<Type> fields = new ArrayList<>();
            for (String c : columns) {
                if (!fileSchema.containsField(c)) {
                    throw new IOException(part + ": the tensor index has no column \"" + c + "\"");
                }
                fields.add(fileSchema.getType(c));
            }
            Configuration projected = new Configuration(conf);
            projected.set(ReadSupport.PARQUET_READ_SCHEMA, new MessageType(fileSchema.getName(), fields).toString());
            try (ParquetReader<Group> reader = ParquetReader.builder(new GroupReadSupport(), part)
                    .withConf(projected).build()) {
                for (Group g = reader.read(); g != null; g = reader.read()) {
                    each.accept(g);
                }
            }
        }
    }

    private static List<Path> parts(Path index, Configuration conf) throws IOException {
        FileSystem fs = index.getFileSystem(conf);
        FileStatus st = fs.getFileStatus(index);
        if (st.isFile()) {
            return List.of(index);
        }
        List<Path> out = new ArrayList<>();
        for (FileStatus c : fs.listStatus(index)) {
            String name = c.getPath().getName();
            if (c.isFile() && name.endsWith(".parquet") && !name.startsWith("_") && !name.startsWith(".")) {
                out.add(c.getPath());
            }
        }
        out.sort(null);
        return out;
    }
}
