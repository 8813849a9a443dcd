package io.github.semyonsinchenko.safetensors.dataset;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.FileMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.hadoop.util.HadoopOutputFile;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;

/**
 * {@code _tensor_index.parquet}: one row per tensor (columns in format/dataset.md). A single file
 * written on the driver with parquet-hadoop (Spark's own dependency), into a temporary name that
 * is then renamed over the old index. Its footer carries the id of the commit that wrote it
 * ({@value #COMMIT_ID_KEY}), the same id as the manifest's {@code index.commit_id}: the index is
 * replaced before the manifest, so a reader of the previous manifest can meet an index that is not
 * its own and must then ignore it ({@link #scan}).
 */
public final class TensorIndexFile {
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

    /** Footer key-value metadata key of the commit id. */
    public static final String COMMIT_ID_KEY = "safetensors.commit_id";

    /**
     * Writes the index and returns its path relative to the root: {@link DatasetLayout#INDEX_FILE},
     * or, when the dataset has an index of an earlier version (a single file named
     * {@link DatasetLayout#INDEX}), that file, replaced in place: turning it into a directory would
     * take it away from readers of the committed version first.
     */
    static String write(FileSystem fs, Configuration conf, Path root, List<IndexEntry> entries, String commitId,
                        DatasetCommit.Policy policy) throws IOException {
        Path legacy = new Path(root, DatasetLayout.INDEX);
        boolean single = fs.exists(legacy) && fs.getFileStatus(legacy).isFile();
        String relative = single ? DatasetLayout.INDEX : DatasetLayout.INDEX_FILE;
        Path target = new Path(root, relative);
        if (!single) {
            fs.mkdirs(target.getParent());
        }
        // A leading dot: invisible to Spark's and pyarrow's listing of the index directory.
        Path tmp = new Path(target.getParent(), DatasetLayout.tempName(target.getName()));
        SimpleGroupFactory groups = new SimpleGroupFactory(SCHEMA);
        try {
            try (ParquetWriter<Group> w = ExampleParquetWriter.builder(HadoopOutputFile.fromPath(tmp, conf))
                    .withType(SCHEMA)
                    .withConf(conf)
                    .withCompressionCodec(CompressionCodecName.SNAPPY)
                    .withWriteMode(ParquetFileWriter.Mode.CREATE)
                    .withExtraMetaData(Map.of(COMMIT_ID_KEY, commitId))
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
            if (policy.fsync()) {
                DatasetCommit.syncFile(fs, tmp);
            }
            DatasetCommit.renameOverwrite(fs, tmp, target, policy);
        } finally {
            fs.delete(tmp, false);
        }
        return relative;
    }

    /** The index was written by another commit than the manifest it is read for. */
    public static final class StaleIndexException extends IOException {
        private static final long serialVersionUID = 1L;

        StaleIndexException(Path part, String want, String found) {
            super(part + ": the tensor index is of commit " + found + ", the manifest of commit " + want);
        }
    }

    /**
     * The dataset files (names relative to the root, as in the index) holding any of {@code keys}.
     *
     * @param index the index file or directory
     * @param commitId the commit the manifest names as the index's (null for manifests without one)
     * @throws StaleIndexException if the index is of another commit
     */
    public static Set<String> filesHoldingKeys(Path index, String commitId, Set<String> keys, Configuration conf)
            throws IOException {
        Set<String> out = new LinkedHashSet<>();
        scan(index, conf, commitId, List.of("tensor_key", "file_name"), g -> {
            if (keys.contains(g.getString("tensor_key", 0))) {
                out.add(g.getString("file_name", 0));
            }
        });
        return out;
    }

    /**
     * The distinct {@code column} values of the index, in order of first appearance.
     *
     * @param index the index file or directory
     * @param commitId the commit the manifest names as the index's (null for manifests without one)
     * @throws StaleIndexException if the index is of another commit
     */
    public static List<String> columns(Path index, String commitId, Configuration conf) throws IOException {
        Set<String> out = new LinkedHashSet<>();
        scan(index, conf, commitId, List.of("column"), g -> out.add(g.getString("column", 0)));
        return new ArrayList<>(out);
    }

    /**
     * Reads {@code columns} of every row of the index (a file, or a directory of part files written
     * by hand), each part through one open file: the footer that is checked against
     * {@code commitId} (null: a manifest from before commit ids, whose index has none either) is the footer of the rows read, even while a commit
     * replaces the index. A mismatch is a {@link StaleIndexException}; callers fall back to the
     * shards' headers, which give the same answers.
     */
    static void scan(Path index, Configuration conf, String commitId, List<String> columns,
                            Consumer<Group> each) throws IOException {
        for (Path part : parts(index, conf)) {
            try (ParquetFileReader r = ParquetFileReader.open(HadoopInputFile.fromPath(part, conf))) {
                FileMetaData meta = r.getFooter().getFileMetaData();
                String id = meta.getKeyValueMetaData().get(COMMIT_ID_KEY);
                if (commitId == null ? id != null : !commitId.equals(id)) {
                    throw new StaleIndexException(part, commitId, id);
                }
                MessageType fileSchema = meta.getSchema();
                List<Type> fields = new ArrayList<>();
                for (String c : columns) {
                    if (!fileSchema.containsField(c)) {
                        throw new IOException(part + ": the tensor index has no column \"" + c + "\"");
                    }
                    fields.add(fileSchema.getType(c));
                }
                MessageType projection = new MessageType(fileSchema.getName(), fields);
                r.setRequestedSchema(projection);
                MessageColumnIO io = new ColumnIOFactory().getColumnIO(projection, fileSchema);
                for (PageReadStore pages = r.readNextRowGroup(); pages != null; pages = r.readNextRowGroup()) {
                    RecordReader<Group> records = io.getRecordReader(pages, new GroupRecordConverter(projection));
                    for (long i = 0; i < pages.getRowCount(); i++) {
                        each.accept(records.read());
                    }
                }
            }
        }
    }

    private static List<Path> parts(Path index, Configuration conf) throws IOException {
        FileSystem fs = index.getFileSystem(conf);
        if (fs.getFileStatus(index).isFile()) {
            return List.of(index);
        }
        List<Path> out = new ArrayList<>();
        for (FileStatus c : fs.listStatus(index)) {
            String name = c.getPath().getName();
            if (c.isFile() && name.endsWith(".parquet") && !DatasetLayout.isHidden(name)) {
                out.add(c.getPath());
            }
        }
        out.sort(null);
        return out;
    }

    private static List<IndexEntry> read(Configuration conf, Path index, String commitId) throws IOException {
        List<IndexEntry> out = new ArrayList<>();
        scan(index, conf, commitId, List.of("tensor_key", "column", "tensor_name", "file_name", "shape", "dtype",
                "begin", "end"), g -> {
                    Group shapeGroup = g.getGroup("shape", 0);
                    long[] shape = new long[shapeGroup.getFieldRepetitionCount("list")];
                    for (int i = 0; i < shape.length; i++) {
                        shape[i] = shapeGroup.getGroup("list", i).getInteger("element", 0);
                    }
                    out.add(new IndexEntry(g.getString("tensor_key", 0), g.getString("column", 0),
                            g.getString("tensor_name", 0), g.getString("file_name", 0), shape,
                            g.getString("dtype", 0), g.getLong("begin", 0), g.getLong("end", 0)));
                });
        return out;
    }

    /**
     * The index of the dataset {@code manifest} describes: its own index file when that is current,
     * else rebuilt from the shards' headers (no index, or the index of another commit).
     */
    public static List<IndexEntry> of(FileSystem fs, Configuration conf, Path root, Manifest manifest)
            throws IOException {
        if (manifest.hasIndex()) {
            Path index = new Path(root, manifest.indexFile());
            if (fs.exists(index)) {
                try {
                    return read(conf, index, manifest.commitId());
                } catch (StaleIndexException stale) {
                    // replaced by a commit in flight: the shards say the same
                }
            }
        }
        return fromShards(fs, root, manifest.shards(), manifest);
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
                if (kv) {
                    TensorNames.Kv parsed = TensorNames.parseKv(name, columns, manifest.kvSeparator());
                    if (parsed == null) {
                        throw new IOException(p + ": tensor '" + name + "' matches no column of " + columns);
                    }
                    key = parsed.key();
                    column = parsed.column();
                } else {
                    TensorNames.Batch parsed = TensorNames.parseBatch(name, columns);
                    if (parsed == null) {
                        throw new IOException(p + ": tensor '" + name + "' is not named <column> or <column>/<batch>"
                                + " for a column of " + columns);
                    }
                    column = parsed.column();
                    key = column;
                }
                out.add(new IndexEntry(key, column, name, s.file(), t.shape(), t.dtype().name(),
                        h.dataOffset() + t.begin(), h.dataOffset() + t.end()));
            }
        }
        return out;
    }
}
