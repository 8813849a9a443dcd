package io.github.semyonsinchenko.safetensors.dataset.mlflow;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import io.github.semyonsinchenko.safetensors.dataset.DatasetLayout;
import io.github.semyonsinchenko.safetensors.dataset.HadoopConfs;
import io.github.semyonsinchenko.safetensors.dataset.Manifest;
import io.github.semyonsinchenko.safetensors.dataset.Shard;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * MLflow lineage for a dataset the connector wrote: reads {@code dataset_manifest.json} from any
 * Hadoop FileSystem and gives the MLflow dataset source as JSON ({@link #toJson()}), the same
 * document {@code safetensors_spark.mlflow.log_dataset} logs from Python for the same path.
 *
 * <p>Fields: {@code uri} (the manifest), {@code dataset_uri} (the dataset root), {@code digest}
 * (first 16 hex digits of the manifest bytes' SHA-256), the versions and totals, {@code num_shards},
 * {@code shards} (path relative to the root, samples, bytes) and {@code schema}. Local paths are
 * written as {@code file:///absolute/path}.
 */
public final class SafetensorsDatasetSource {
    /** MLflow's {@code source_type} for these sources. */
    public static final String SOURCE_TYPE = "safetensors";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String datasetUri;
    private final String manifestUri;
    private final String digest;
    private final Manifest manifest;

    private SafetensorsDatasetSource(String datasetUri, String manifestUri, String digest, Manifest manifest) {
        this.datasetUri = datasetUri;
        this.manifestUri = manifestUri;
        this.digest = digest;
        this.manifest = manifest;
    }

    /**
     * Reads the manifest with a default Hadoop configuration ({@link HadoopConfs}); from Spark, pass
     * the session's ({@code spark.sparkContext().hadoopConfiguration()}) to {@link #fromPath(String, Configuration)}.
     *
     * @param path the dataset root
     * @return the source
     * @throws IOException as {@link #fromPath(String, Configuration)}
     */
    public static SafetensorsDatasetSource fromPath(String path) throws IOException {
        return fromPath(path, HadoopConfs.of(Map.of()));
    }

    /**
     * Reads {@code <path>/dataset_manifest.json}.
     *
     * @param path the dataset root
     * @param hadoopConf the Hadoop configuration (from Spark: the session's)
     * @return the source
     * @throws FileNotFoundException naming the manifest when the path holds none (no committed dataset)
     * @throws IOException if it cannot be read (a {@code DatasetException}) or is not a manifest
     */
    public static SafetensorsDatasetSource fromPath(String path, Configuration hadoopConf) throws IOException {
        Path root = new Path(path);
        FileSystem fs = root.getFileSystem(hadoopConf);
        Path qualified = fs.makeQualified(root);
        Path manifestPath = new Path(qualified, DatasetLayout.MANIFEST);
        // Absent and unreadable differ: a manifest the user may not read is never "not found".
        byte[] bytes = Manifest.bytesOf(fs, manifestPath);
        if (bytes == null) {
            throw new FileNotFoundException(DatasetLayout.MANIFEST + " not found at " + manifestPath
                    + ": not a committed safetensors dataset (write one with format(\"safetensors\") first)");
        }
        // The one manifest reader (dataset.Manifest); lineage also needs the totals and versions present.
        Manifest summary = Manifest.parseComplete(bytes, manifestPath.toString());
        return new SafetensorsDatasetSource(uri(qualified), uri(manifestPath), digest(bytes), summary);
    }

    /** A local path as file:///abs/path (what Python's Path.as_uri gives); other schemes as Hadoop writes them. */
    private static String uri(Path p) {
        URI u = p.toUri();
        if ("file".equals(u.getScheme())) {
            try {
                return new URI("file", "", u.getPath(), null).toString();
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException(p + ": " + e.getMessage(), e);
            }
        }
        return u.toString();
    }

    private static String digest(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JVM", e);
        }
    }

    /** {@return the manifest's URI} */
    public String uri() {
        return manifestUri;
    }

    /** {@return the dataset root's URI} */
    public String datasetUri() {
        return datasetUri;
    }

    /** {@return the first 16 hex digits of the manifest bytes' SHA-256} */
    public String digest() {
        return digest;
    }

    /** {@return the manifest} */
    public Manifest manifest() {
        return manifest;
    }

    /** {@return the MLflow dataset source document (what MLflow stores as the dataset's {@code source})} */
    public String toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("uri", manifestUri);
        root.put("dataset_uri", datasetUri);
        root.put("digest", digest);
        root.put("format_version", manifest.formatVersion());
        root.put("safetensors_version", manifest.safetensorsVersion());
        root.put("total_samples", manifest.totalSamples());
        root.put("total_bytes", manifest.totalBytes());
        root.put("num_shards", manifest.shards().size());
        ArrayNode shards = root.putArray("shards");
        for (Shard s : manifest.shards()) {
            shards.addObject().put("path", s.file()).put("samples_count", s.samples()).put("bytes", s.bytes());
        }
        root.set("schema", manifest.schemaJson());
        try {
            return JSON.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return "SafetensorsDatasetSource(" + manifestUri + ")";
    }
}
