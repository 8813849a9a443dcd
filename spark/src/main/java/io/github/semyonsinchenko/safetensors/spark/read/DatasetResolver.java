package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct;
import io.github.semyonsinchenko.safetensors.dataset.ColumnSchema;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.dataset.DatasetException;
import io.github.semyonsinchenko.safetensors.dataset.DatasetVersions;
import io.github.semyonsinchenko.safetensors.dataset.Manifest;
import io.github.semyonsinchenko.safetensors.dataset.ShardCheck;
import io.github.semyonsinchenko.safetensors.dataset.TensorIndexFile;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.dataset.Shard;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Driver side: turns the {@code path}/{@code paths} options into a {@link ResolvedDataset}. A
 * directory with a manifest contributes exactly the manifest's shards (uncommitted files are never
 * read); a directory without one contributes its {@code *.safetensors} files (names starting with
 * {@code _} or {@code .} excluded); a file or glob contributes itself.
 */
public final class DatasetResolver {
    /** The kv layout's key column: the part of a tensor's name before the separator. */
    public static final String TENSOR_KEY = "tensor_key";
    static final String EXTENSION = ".safetensors";

    private DatasetResolver() {}

    /**
     * Resolves the read's paths. A path that does not exist, or a directory that was a dataset but has
     * no manifest (without {@code looseFiles}), is Spark's {@code AnalysisException}.
     *
     * @param options the read's options, with {@code path} or {@code paths}
     * @param opts the parsed read options
     * @param userSchema the schema the user gave, or null when it is being inferred
     * @param conf the Hadoop configuration
     * @param checkShards check the first shard against the manifest (the scan's resolution does;
     *     schema inference, which resolves the same paths just before, does not repeat the read)
     * @return the files and naming rules of the read
     */
    public static ResolvedDataset resolve(CaseInsensitiveStringMap options, ReadOptions opts, StructType userSchema,
                                          Configuration conf, boolean checkShards) {
        List<String> roots = paths(options);
        if (roots.isEmpty()) {
            throw Errors.analysis("format(\"safetensors\") needs a path: use load(path)");
        }
        List<DatasetFile> files = new ArrayList<>();
        Manifest manifest = null;
        Path manifestRoot = null;
        String indexRoot = null;
        Manifest indexed = null;
        try {
            for (String root : roots) {
                Path p = new Path(root);
                FileSystem fs = p.getFileSystem(conf);
                FileStatus[] matched = fs.globStatus(p);
                if (matched == null || matched.length == 0) {
                    throw Errors.analysis("Path does not exist: " + root);
                }
                for (FileStatus st : matched) {
                    if (st.isFile()) {
                        files.add(new DatasetFile(st.getPath().toString(), st.getLen()));
                        continue;
                    }
                    Path dir = st.getPath();
                    DatasetVersions.Snapshot snapshot = DatasetVersions.latest(fs, dir);
                    if (snapshot != null) {
                        Manifest m = snapshot.manifest();
                        if (manifest == null) {
                            manifest = m;
                            manifestRoot = dir;
                        }
                        Map<String, Long> lengths = new HashMap<>();
                        for (FileStatus c : fs.listStatus(dir)) {
                            lengths.put(c.getPath().getName(), c.getLen());
                        }
                        for (Shard shard : m.shards()) {
                            Path sp = new Path(dir, shard.file()); // normalised, inside the root (Manifest)
                            Long len = lengths.get(sp.getName());
                            if (len == null || !sp.getParent().equals(dir)) {
                                len = fs.getFileStatus(sp).getLen(); // fails clearly if missing
                            }
                            files.add(new DatasetFile(sp.toString(), len, shard.samples()));
                        }
                        // The index picks files only for a read of this one dataset; it is checked when used.
                        if (m.hasIndex() && indexed == null && roots.size() == 1 && matched.length == 1) {
                            indexed = m;
                            indexRoot = dir.toString();
                        }
                    } else {
                        FileStatus[] children = fs.listStatus(dir);
                        if (!opts.looseFiles()) {
                            refuseDatasetWithoutManifest(dir, children);
                        }
                        List<DatasetFile> inDir = new ArrayList<>();
                        for (FileStatus c : children) {
                            String name = c.getPath().getName();
                            if (c.isFile() && name.endsWith(EXTENSION) && !name.startsWith("_")
                                    && !name.startsWith(".")) {
                                inDir.add(new DatasetFile(c.getPath().toString(), c.getLen()));
                            }
                        }
                        inDir.sort(Comparator.comparing(DatasetFile::path));
                        files.addAll(inDir);
                    }
                }
            }
            if (checkShards && manifest != null && manifest.writeMode() != null && !manifest.shards().isEmpty()) {
                checkFirstShard(manifestRoot.getFileSystem(conf), manifestRoot, manifest);
            }
        } catch (DatasetException e) {
            throw Errors.analysis("cannot read safetensors dataset " + roots + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw Errors.analysis("cannot list safetensors dataset " + roots + ": " + e.getMessage(), e);
        }

        ReadOptions.Layout layout = opts.layout();
        boolean userKv = userSchema != null && hasKeyColumn(userSchema);
        if (layout == ReadOptions.Layout.AUTO) {
            layout = (manifest != null && manifest.isKv()) || userKv ? ReadOptions.Layout.KV : ReadOptions.Layout.WIDE;
        }
        boolean batchNaming = manifest != null && manifest.isBatch() && layout == ReadOptions.Layout.WIDE;
        if (manifest != null && manifest.isBatch() && layout == ReadOptions.Layout.KV) {
            throw Errors.analysis("the dataset was written in batch mode; read it with layout=wide (the default),"
                    + " not layout=kv");
        }
        List<String> naming = new ArrayList<>();
        Map<String, ColumnSchema> manifestSchema = new LinkedHashMap<>();
        // A manifest of another mode (e.g. kv read as wide) does not name this layout's columns.
        boolean manifestNames = manifest != null && ((layout == ReadOptions.Layout.KV && manifest.isKv()) || batchNaming);
        if (manifestNames) {
            manifestSchema.putAll(manifest.schema());
            naming.addAll(manifest.schema().keySet());
            if (naming.isEmpty() && indexed != null) {
                // A manifest without a schema: the index names the columns (when it passes its checks).
                try {
                    Path r = new Path(indexRoot);
                    List<String> fromIndex = TensorIndexFile.columns(r.getFileSystem(conf), conf, r, indexed);
                    if (fromIndex != null) {
                        naming.addAll(fromIndex);
                    }
                } catch (IOException e) {
                    throw Errors.analysis("cannot read the tensor index of " + indexRoot + ": " + e.getMessage(), e);
                }
            }
        }
        if (layout == ReadOptions.Layout.KV && naming.isEmpty()) {
            if (userSchema != null) {
                for (StructField f : userSchema.fields()) {
                    if (!isKeyField(f)) {
                        naming.add(f.name());
                    }
                }
            }
            if (naming.isEmpty()) {
                naming.add(ResolvedDataset.DEFAULT_KV_COLUMN);
            }
        }
        if (userSchema != null) {
            validateUserSchema(userSchema, layout);
        }
        String kvSeparator = manifestNames && layout == ReadOptions.Layout.KV ? manifest.kvSeparator() : null;
        return new ResolvedDataset(files, layout, batchNaming, naming, kvSeparator, manifestSchema,
                manifestNames ? indexRoot : null, manifestNames ? indexed : null, manifest != null,
                manifestNames ? ShardCheck.of(manifest) : null);
    }

    /**
     * The first shard against the manifest, on the driver, so a manifest that disagrees with its
     * shards (another separator, other columns, dtypes or shapes) is an error before any task runs;
     * the readers check every shard they open the same way.
     */
    private static void checkFirstShard(FileSystem fs, Path root, Manifest manifest) throws IOException {
        ShardCheck check = ShardCheck.of(manifest);
        Path first = new Path(root, manifest.shards().get(0).file());
        Header h;
        try (java.io.InputStream in = fs.open(first)) {
            h = Header.read(in, fs.getFileStatus(first).getLen(), first.toString());
        }
        check.check(h, first.toString());
    }

    /**
     * A directory without a manifest that is, or was, a dataset (history, staging directory, our
     * shard names) is mid-commit, crashed or damaged: reading its files as loose files would mix
     * versions or return rows of no version, so it is an error unless {@code looseFiles=true}.
     */
    private static void refuseDatasetWithoutManifest(Path dir, FileStatus[] children) {
        List<String> traces = new ArrayList<>();
        int shards = 0;
        for (FileStatus c : children) {
            String name = c.getPath().getName();
            if (c.isDirectory() && (name.equals(DatasetLayout.HISTORY) || name.equals(DatasetLayout.STAGING)
                    || name.equals(DatasetLayout.INDEX_VERSIONS))) {
                traces.add(name + "/");
            } else if (name.startsWith("." + DatasetLayout.MANIFEST + ".")) {
                traces.add(name);
            } else if (c.isFile() && DatasetLayout.isShardName(name)) {
                shards++;
            }
        }
        if (shards > 0) {
            traces.add(shards + " shard file(s) named part-<task>-[<shard>-]<uuid>.safetensors");
        }
        if (!traces.isEmpty()) {
            throw Errors.analysis(dir + " is or was a safetensors dataset (" + String.join(", ", traces)
                    + ") but has no " + DatasetLayout.MANIFEST + ": a write may be committing or have crashed, or"
                    + " the manifest was removed; reading its files would mix versions. Read it again once a"
                    + " commit is in place, or set .option(\"" + ReadOptions.LOOSE_FILES + "\", \"true\") to read"
                    + " its .safetensors files as plain files");
        }
    }

    static List<String> paths(CaseInsensitiveStringMap options) {
        List<String> out = new ArrayList<>();
        String path = options.get("path");
        if (path != null && !path.isEmpty()) {
            out.add(path);
        }
        String paths = options.get("paths");
        if (paths != null && !paths.isEmpty()) {
            try {
                for (var n : new com.fasterxml.jackson.databind.ObjectMapper().readTree(paths)) {
                    out.add(n.asText());
                }
            } catch (IOException e) {
                throw new IllegalArgumentException("option paths is not a JSON array of strings: " + paths, e);
            }
        }
        return out;
    }

    static boolean hasKeyColumn(StructType schema) {
        for (StructField f : schema.fields()) {
            if (isKeyField(f)) {
                return true;
            }
        }
        return false;
    }

    static boolean isKeyField(StructField f) {
        return f.name().equals(TENSOR_KEY) && f.dataType() == DataTypes.StringType;
    }

    private static void validateUserSchema(StructType schema, ReadOptions.Layout layout) {
        for (StructField f : schema.fields()) {
            if (layout == ReadOptions.Layout.KV && isKeyField(f)) {
                continue;
            }
            if (!TensorStruct.is(f.dataType())) {
                throw Errors.analysis("column " + f.name() + " of the given schema is " + f.dataType().simpleString()
                        + "; every column of a safetensors read is a tensor struct " + TensorStruct.TYPE.simpleString()
                        + (layout == ReadOptions.Layout.KV ? " except tensor_key (string)" : ""));
            }
        }
    }
}
