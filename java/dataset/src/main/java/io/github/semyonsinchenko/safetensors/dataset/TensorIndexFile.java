package io.github.semyonsinchenko.safetensors.dataset;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tensor index: one row per tensor (columns in format/dataset.md), one Parquet file per version,
 * written by the commit with parquet-hadoop (Spark's own dependency) before it claims the version, and
 * immutable afterwards ({@link DatasetLayout#INDEX_VERSIONS}). The manifest names it with the SHA-256 of
 * its bytes, and its footer carries the commit id ({@value #COMMIT_ID_KEY}); a copy of the newest goes
 * to {@link DatasetLayout#INDEX_FILE} for tools that read the index by its directory name.
 *
 * <p>An index is metadata, so it is checked before it is used ({@link #filesHoldingKeys}): its bytes
 * against the manifest's hash, its commit id against the manifest's, the files it names against the
 * shards, and the shards it selects against their own headers. An index that fails any check, or
 * cannot be read at all, is not used: the reader opens every shard instead (same rows, slower), with a
 * warning.
 */
public final class TensorIndexFile {
    private static final Logger LOG = LoggerFactory.getLogger(TensorIndexFile.class);

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
     * Writes version {@code version}'s index under {@link DatasetLayout#INDEX_VERSIONS}, to a name no
     * other attempt uses, and returns the manifest's reference to it.
     */
    static Manifest.IndexRef write(FileSystem fs, Configuration conf, Path root, List<IndexEntry> entries,
                                   String commitId, long version, CommitPolicy policy) throws IOException {
        String relative = DatasetLayout.indexVersionFile(version, UUID.randomUUID());
        Path target = new Path(root, relative);
        fs.mkdirs(target.getParent());
        // A leading dot: invisible to Spark's and pyarrow's listings.
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
            String sha = sha256(fs, tmp);
            if (!fs.rename(tmp, target)) {
                throw new IOException("could not move the index " + tmp + " to " + target);
            }
            return new Manifest.IndexRef(relative, commitId, sha, entries.size());
        } finally {
            fs.delete(tmp, false);
        }
    }

    /**
     * Copies version {@code index}'s file to {@link DatasetLayout#INDEX_FILE} (or over the single file
     * {@link DatasetLayout#INDEX} of a dataset of an earlier version), for tools that read the index by
     * its directory name; replaced in one step, never read by this library.
     */
    static void copyForTools(FileSystem fs, Path root, Manifest.IndexRef index, CommitPolicy policy)
            throws IOException {
        Path legacy = new Path(root, DatasetLayout.INDEX);
        boolean single = fs.exists(legacy) && fs.getFileStatus(legacy).isFile();
        Path target = new Path(root, single ? DatasetLayout.INDEX : DatasetLayout.INDEX_FILE);
        if (!single) {
            fs.mkdirs(target.getParent());
        }
        byte[] bytes;
        try (InputStream in = fs.open(new Path(root, index.file()))) {
            bytes = in.readAllBytes();
        }
        Path tmp = new Path(target.getParent(), DatasetLayout.tempName(target.getName()));
        try {
            try (FSDataOutputStream out = fs.create(tmp, false)) {
                out.write(bytes);
            }
            DatasetCommit.renameOverwrite(fs, tmp, target, policy);
        } finally {
            fs.delete(tmp, false);
        }
    }

    /** The hex SHA-256 of a file's bytes. */
    static String sha256(FileSystem fs, Path file) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JVM", e);
        }
        byte[] buf = new byte[1 << 16];
        try (InputStream in = fs.open(file)) {
            for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                md.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /** The index was written by another commit than the manifest it is read for. */
    public static final class StaleIndexException extends IOException {
        private static final long serialVersionUID = 1L;

        StaleIndexException(Path part, String want, String found) {
            super(part + ": the tensor index is of commit " + found + ", the manifest of commit " + want);
        }
    }

    /**
     * Reads {@code columns} of every row of the index (a file, or a directory of part files written
     * by hand), each part through one open file: the footer that is checked against
     * {@code commitId} (null: a manifest from before commit ids, whose index has none either) is the
     * footer of the rows read. A mismatch is a {@link StaleIndexException}.
     *
     * @param index the index file or directory
     * @param conf the Hadoop configuration
     * @param commitId the commit the index must come from
     * @param columns the columns to read
     * @param each receives every row
     * @throws IOException when it cannot be read or is of another commit
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

    /**
     * The index of {@code manifest}, checked against it: the file's bytes against the manifest's
     * SHA-256 (when recorded), the commit id in its footer, and every file it names against the
     * manifest's shards. Reading failures of any kind (a truncated or corrupt file) are a
     * {@link DatasetException} too, never a raw Parquet exception.
     */
    static void scanChecked(FileSystem fs, Configuration conf, Path root, Manifest manifest, List<String> columns,
                            Consumer<Group> each) throws DatasetException {
        Path file = new Path(root, manifest.indexFile());
        String source = file.toString();
        try {
            Manifest.IndexRef ref = manifest.index();
            if (ref.sha256() != null) {
                String sha = sha256(fs, file);
                if (!sha.equals(ref.sha256())) {
                    throw new DatasetException(DatasetRule.INDEX_MISMATCH, source, "its SHA-256 is " + sha
                            + ", the manifest of version " + manifest.version() + " says " + ref.sha256());
                }
            }
            List<String> read = new ArrayList<>(columns);
            if (!read.contains("file_name")) {
                read.add("file_name");
            }
            Set<String> shards = manifest.shardFiles();
            long[] rows = {0};
            scan(file, conf, manifest.commitId(), read, g -> {
                String f = g.getString("file_name", 0);
                if (!shards.contains(f)) {
                    throw new UnknownShard(f);
                }
                rows[0]++;
                each.accept(g);
            });
            if (ref.rows() >= 0 && rows[0] != ref.rows()) {
                throw new DatasetException(DatasetRule.INDEX_MISMATCH, source, "it has " + rows[0]
                        + " rows, the manifest says " + ref.rows());
            }
        } catch (DatasetException e) {
            throw e;
        } catch (UnknownShard e) {
            throw new DatasetException(DatasetRule.INDEX_MISMATCH, source, "it names " + e.file
                    + ", which is not a shard of version " + manifest.version());
        } catch (IOException | RuntimeException e) {
            throw new DatasetException(DatasetRule.INDEX_MISMATCH, source, "it cannot be read: " + e, e);
        }
    }

    /** Thrown out of a row callback: the index names a file the manifest does not. */
    private static final class UnknownShard extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final String file;

        UnknownShard(String file) {
            super(file, null, false, false);
            this.file = file;
        }
    }

    private static List<IndexEntry> read(FileSystem fs, Configuration conf, Path root, Manifest manifest)
            throws DatasetException {
        List<IndexEntry> out = new ArrayList<>();
        scanChecked(fs, conf, root, manifest, List.of("tensor_key", "column", "tensor_name", "file_name", "shape",
                "dtype", "begin", "end"), g -> {
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
     * The index of the dataset {@code manifest} describes: its own index file when that passes the
     * checks, else rebuilt from the shards' headers (no index, or one that fails; logged).
     *
     * @param fs the file system
     * @param conf the Hadoop configuration
     * @param root the dataset root
     * @param manifest the version
     * @return one entry per tensor of the version
     * @throws IOException when a shard cannot be read
     */
    public static List<IndexEntry> of(FileSystem fs, Configuration conf, Path root, Manifest manifest)
            throws IOException {
        if (manifest.hasIndex()) {
            try {
                return read(fs, conf, root, manifest);
            } catch (DatasetException e) {
                LOG.warn("safetensors: not using the tensor index of version {} ({}); rebuilding it from the"
                        + " shards' headers", manifest.version(), e.getMessage());
            }
        }
        return fromShards(fs, root, manifest.shards(), manifest);
    }

    /**
     * The shards of {@code manifest} that hold any of {@code keys}, from its index, or null when the
     * index cannot be used (logged with the reason; the caller reads every shard). Besides the checks of
     * the index itself ({@link #scanChecked}), an index the manifest records no hash of (written by an
     * earlier version, or by hand) is checked against the shards it selects: each must hold, in its own
     * header, the tensor the index places there, so a key the index moved to another shard is noticed.
     * An index whose hash matches is the one the commit wrote from the tasks' own reports.
     *
     * @param fs the file system
     * @param conf the Hadoop configuration
     * @param root the dataset root
     * @param manifest the version read
     * @param keys the {@code tensor_key} values wanted
     * @return the shard files (relative, normalised) holding the keys, or null
     */
    public static Set<String> filesHoldingKeys(FileSystem fs, Configuration conf, Path root, Manifest manifest,
                                               Set<String> keys) {
        Map<String, Set<String>> tensorsByFile = new HashMap<>();
        try {
            scanChecked(fs, conf, root, manifest, List.of("tensor_key", "tensor_name", "file_name"), g -> {
                if (keys.contains(g.getString("tensor_key", 0))) {
                    tensorsByFile.computeIfAbsent(g.getString("file_name", 0), f -> new HashSet<>())
                            .add(g.getString("tensor_name", 0));
                }
            });
            if (manifest.index().sha256() == null) {
                checkAgainstHeaders(fs, root, manifest, tensorsByFile);
            }
        } catch (DatasetException e) {
            LOG.warn("safetensors: not using the tensor index ({}); reading every shard instead", e.getMessage());
            return null;
        } catch (IOException e) {
            LOG.warn("safetensors: not using the tensor index of {} ({}); reading every shard instead", root,
                    e.toString());
            return null;
        }
        return new LinkedHashSet<>(tensorsByFile.keySet());
    }

    /** Each shard must hold, in its own header, the tensors the index places there. */
    private static void checkAgainstHeaders(FileSystem fs, Path root, Manifest manifest,
                                            Map<String, Set<String>> tensorsByFile) throws IOException {
        for (Map.Entry<String, Set<String>> e : tensorsByFile.entrySet()) {
            Path shard = new Path(root, e.getKey());
            Set<String> names = new HashSet<>();
            try (InputStream in = fs.open(shard)) {
                for (TensorInfo t : Header.read(in, fs.getFileStatus(shard).getLen(), shard.toString()).tensors()) {
                    names.add(t.name());
                }
            }
            for (String t : e.getValue()) {
                if (!names.contains(t)) {
                    throw new DatasetException(DatasetRule.INDEX_MISMATCH, new Path(root, manifest.indexFile())
                            .toString(), "it places tensor \"" + t + "\" in " + e.getKey()
                            + ", whose header has no such tensor");
                }
            }
        }
    }

    /**
     * The distinct {@code column} values of a checked index, in order of first appearance, or null when
     * it cannot be used (logged).
     *
     * @param fs the file system
     * @param conf the Hadoop configuration
     * @param root the dataset root
     * @param manifest the version whose index to read
     * @return the columns, or null
     */
    public static List<String> columns(FileSystem fs, Configuration conf, Path root, Manifest manifest) {
        Set<String> out = new LinkedHashSet<>();
        try {
            scanChecked(fs, conf, root, manifest, List.of("column"), g -> out.add(g.getString("column", 0)));
        } catch (DatasetException e) {
            LOG.warn("safetensors: not using the tensor index ({})", e.getMessage());
            return null;
        }
        return new ArrayList<>(out);
    }

    /** Index entries rebuilt from the shards' headers (for a dataset written without an index). */
    static List<IndexEntry> fromShards(FileSystem fs, Path root, List<Shard> shards, Manifest manifest)
            throws IOException {
        List<String> columns = List.copyOf(manifest.schema().keySet());
        boolean kv = manifest.isKv();
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
                        throw new DatasetException(DatasetRule.SCHEMA_MISMATCH, p.toString(), "tensor \"" + name
                                + "\" matches no column of " + columns);
                    }
                    key = parsed.key();
                    column = parsed.column();
                } else {
                    TensorNames.Batch parsed = TensorNames.parseBatch(name, columns);
                    if (parsed == null) {
                        throw new DatasetException(DatasetRule.SCHEMA_MISMATCH, p.toString(), "tensor \"" + name
                                + "\" is not named <column> or <column>/<batch> for a column of " + columns);
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
