package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.dataset.TensorIndexFile;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * Driver-side questions to {@code _tensor_index.parquet}, through {@link TensorIndexFile#scan}
 * (parquet-hadoop directly: Spark's own Parquet source would skip a path whose name starts with
 * {@code _}). Only the requested columns are read; an index of another commit than the manifest's
 * is a {@link TensorIndexFile.StaleIndexException}.
 */
final class TensorIndex {
    private TensorIndex() {}

    /** The dataset files (relative names as in the index) holding any of {@code keys}. */
    static Set<String> filesHoldingKeys(String indexPath, String commitId, Set<String> keys, Configuration conf)
            throws IOException {
        Set<String> out = new LinkedHashSet<>();
        TensorIndexFile.scan(new Path(indexPath), conf, commitId, List.of("tensor_key", "file_name"), g -> {
            if (keys.contains(g.getString("tensor_key", 0))) {
                out.add(g.getString("file_name", 0));
            }
        });
        return out;
    }

    /** The distinct {@code column} values, in order of first appearance. */
    static List<String> columns(String indexPath, String commitId, Configuration conf) throws IOException {
        Set<String> out = new LinkedHashSet<>();
        TensorIndexFile.scan(new Path(indexPath), conf, commitId, List.of("column"),
                g -> out.add(g.getString("column", 0)));
        return new ArrayList<>(out);
    }
}
