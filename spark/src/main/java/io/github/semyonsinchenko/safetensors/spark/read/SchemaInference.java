package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Infers the schema of a read (only with {@code inferSchema=true}).
 * <ul>
 *   <li>kv: {@code tensor_key string NOT NULL} then one nullable Tensor Struct per serialized column
 *       (a key need not have every column);</li>
 *   <li>batch datasets: one Tensor Struct per serialized column, NOT NULL: every batch of a batch
 *       write holds every column, and the reader fails rather than return null for one that does not;</li>
 *   <li>plain files: one nullable Tensor Struct per tensor of the first file, in offset order (the
 *       first file says nothing about the others, so any column may be absent elsewhere).</li>
 * </ul>
 * The columns come from the manifest's schema when there is one, else from the tensor index, else
 * from the first file's header (read whole, however large); with {@code ignoreCorruptFiles} the
 * first file with a valid header.
 */
public final class SchemaInference {
    private SchemaInference() {}

    /**
     * The schema of a read, as the class describes. Fails with Spark's {@code AnalysisException} when
     * there is nothing to infer from.
     *
     * @param ds the resolved dataset
     * @param conf the Hadoop configuration for reading the first file's header
     * @param ignoreCorruptFiles skip files whose header is invalid, using the first valid one
     * @return the inferred schema
     */
    public static StructType infer(ResolvedDataset ds, Configuration conf, boolean ignoreCorruptFiles) {
        // kv and batch datasets: the resolver already named the columns (manifest schema, else index).
        List<String> columns = new ArrayList<>(ds.namingColumns());
        boolean fromDataset = ds.batchNaming() || ds.layout() == ReadOptions.Layout.KV;
        boolean kv = ds.layout() == ReadOptions.Layout.KV;
        if (!fromDataset && !kv) {
            if (ds.files().isEmpty()) {
                throw Errors.analysis("Unable to infer schema for safetensors: no .safetensors files found; pass"
                        + " .schema(...) to read an empty dataset");
            }
            Header h = null;
            for (DatasetFile f : ds.files()) {
                try {
                    h = TensorSource.readHeader(f, conf);
                    break;
                } catch (IOException e) {
                    // Like the scan: a corrupt file is skipped only with ignoreCorruptFiles.
                    if (!ignoreCorruptFiles) {
                        throw Errors.analysis("Unable to infer schema for safetensors from " + f.path() + ": "
                                + e.getMessage(), e);
                    }
                }
            }
            if (h == null) {
                throw Errors.analysis("Unable to infer schema for safetensors: none of the " + ds.files().size()
                        + " file(s) has a valid header (ignoreCorruptFiles skipped them all); pass .schema(...)");
            }
            columns = new ArrayList<>();
            for (TensorInfo t : h.tensors()) {
                columns.add(t.name());
            }
        }
        List<StructField> fields = new ArrayList<>();
        if (kv) {
            fields.add(DataTypes.createStructField(DatasetResolver.TENSOR_KEY, DataTypes.StringType, false));
        }
        // Only a batch manifest proves that every row has every column.
        boolean nullable = !(ds.batchNaming() && !ds.manifestSchema().isEmpty());
        for (String c : columns) {
            fields.add(DataTypes.createStructField(c, TensorStruct.TYPE, nullable));
        }
        return new StructType(fields.toArray(StructField[]::new));
    }
}
