package io.github.semyonsinchenko.safetensors.preprocess.input;

import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.hadoop.Footer;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat$;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter$;
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

/**
 * A table's Parquet data and its files' row counts, read from the files' footers (metadata, not
 * table data) rather than by a Spark job over the rows. The names are the Dataset's own
 * {@code inputFiles()}, the form Spark gives {@code _metadata.file_path} (a URI string: a space
 * is {@code %20}), so a stage can match rows to files by that column.
 */
final class ParquetFiles {
    /**
     * Spark's own bound for listing files on the driver; above it the footers are read by a job.
     * Read through Spark's typed getter, as Spark reads it.
     */
    public static final String DRIVER_FILES_CONF = "spark.sql.sources.parallelPartitionDiscovery.threshold";

    /** One file with rows, named as in {@code _metadata.file_path}. */
    record File(String path, long rows) {}

    /** The Parquet data as Spark reads it, and its files with rows in name order. */
    record Input(Dataset<Row> raw, List<File> files) {}

    private ParquetFiles() {}

    /** Reads the file or directory {@code path}; {@code where} names the table for errors. */
    static Input read(SparkSession spark, java.nio.file.Path path, String where) {
        if (!java.nio.file.Files.isRegularFile(path)) {
            Dataset<Row> raw = spark.read().parquet(path.toString());
            return new Input(raw, of(spark, raw, where));
        }
        // One file, headwater's layout: its footer gives the row count and the schema Spark would
        // infer, which Spark reads in a job of its own unless it is given.
        Configuration conf = spark.sessionState().newHadoopConf();
        Footer footer;
        try {
            footer = footer(conf, new Path(path.toString()));
        } catch (UncheckedIOException e) {
            throw new PreprocessException(where + ": " + e.getMessage(), e);
        }
        StructType schema = ParquetFileFormat$.MODULE$.readSchemaFromFooter(footer, converter(spark));
        Dataset<Row> raw = spark.read().schema(schema).parquet(path.toString());
        long rows = footer.getParquetMetadata().getBlocks().stream().mapToLong(b -> b.getRowCount()).sum();
        return new Input(raw, rows == 0 ? List.of() : List.of(new File(filePathColumn(raw.inputFiles()[0]), rows)));
    }

    /**
     * The converter Spark's schema inference builds ({@code ParquetFileFormat.mergeSchemasInParallel}):
     * the session's settings where it reads them, the converter's defaults elsewhere.
     */
    private static ParquetToSparkSchemaConverter converter(SparkSession spark) {
        SQLConf c = spark.sessionState().conf();
        ParquetToSparkSchemaConverter$ d = ParquetToSparkSchemaConverter$.MODULE$;
        return new ParquetToSparkSchemaConverter(c.isParquetBinaryAsString(), c.isParquetINT96AsTimestamp(),
                d.$lessinit$greater$default$3(), c.parquetInferTimestampNTZEnabled(), c.legacyParquetNanosAsLong(),
                d.$lessinit$greater$default$6(), d.$lessinit$greater$default$7(),
                c.parquetReaderRespectUnknownTypeAnnotation());
    }

    /**
     * The files of {@code raw} with at least one row, sorted by name (the order rows are numbered
     * in). {@code where} names the table for errors.
     */
    static List<File> of(SparkSession spark, Dataset<Row> raw, String where) {
        String[] names = raw.inputFiles();
        long[] rows = names.length > driverFiles(spark) ? rowsByJob(spark, names, where)
                : rowsOnDriver(spark, names, where);
        List<File> files = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
            if (rows[i] > 0) { // an empty file holds no row to number
                files.add(new File(filePathColumn(names[i]), rows[i]));
            }
        }
        files.sort(Comparator.comparing(File::path)); // String order, as the column's values were sorted before
        return files;
    }

    /**
     * The {@code _metadata.file_path} value of the rows of a file {@code inputFiles()} names:
     * Spark's own steps (FileFormat's extractor of the column over SparkPath's decoding), which
     * differ from the listing's form for some names.
     */
    static String filePathColumn(String inputFile) {
        try {
            Path decoded = new Path(new URI(inputFile));
            return new Path(decoded.toString()).toUri().toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(inputFile + ": not a URI", e);
        }
    }

    private static long driverFiles(SparkSession spark) {
        return spark.sessionState().conf().parallelPartitionDiscoveryThreshold();
    }

    private static long[] rowsOnDriver(SparkSession spark, String[] names, String where) {
        Configuration conf = spark.sessionState().newHadoopConf();
        long[] rows = new long[names.length];
        for (int i = 0; i < names.length; i++) {
            try {
                rows[i] = rows(conf, names[i]);
            } catch (UncheckedIOException e) {
                throw new PreprocessException(where + ": " + e.getMessage(), e);
            }
        }
        return rows;
    }

    /**
     * Many files (a cluster's table): the executors read the footers, as Spark lists many files. The
     * session's Hadoop configuration reaches them as Spark's file sources ship theirs: broadcast once
     * as Spark's {@link SerializableConfiguration}.
     */
    private static long[] rowsByJob(SparkSession spark, String[] names, String where) {
        JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        Broadcast<SerializableConfiguration> hadoopConf =
                sc.broadcast(new SerializableConfiguration(spark.sessionState().newHadoopConf()));
        int slices = Math.max(1, Math.min(names.length, sc.defaultParallelism()));
        try {
            List<Long> counts = sc.parallelize(List.of(names), slices).mapPartitions((Iterator<String> it) -> {
                Configuration conf = hadoopConf.value().value();
                List<Long> out = new ArrayList<>();
                while (it.hasNext()) {
                    out.add(rows(conf, it.next()));
                }
                return out.iterator();
            }).collect();
            return counts.stream().mapToLong(Long::longValue).toArray();
        } catch (Exception e) { // a SparkException around the task's UncheckedIOException
            if (!(e instanceof SparkException) && !(e instanceof UncheckedIOException)) {
                throw e;
            }
            Throwable cause = e;
            while (cause.getCause() != null && !(cause instanceof UncheckedIOException)) {
                cause = cause.getCause();
            }
            throw new PreprocessException(where + ": " + cause.getMessage(), e);
        } finally {
            hadoopConf.destroy();
        }
    }

    /** Rows in one file, from its footer; {@code name} as {@code inputFiles()} gives it. */
    static long rows(Configuration conf, String name) {
        try {
            return footer(conf, new Path(new URI(name))).getParquetMetadata().getBlocks().stream()
                    .mapToLong(b -> b.getRowCount()).sum();
        } catch (URISyntaxException e) {
            throw new UncheckedIOException(name + ": not a file URI", new IOException(e));
        }
    }

    private static Footer footer(Configuration conf, Path path) {
        try (ParquetFileReader reader = ParquetFileReader.open(HadoopInputFile.fromPath(path, conf))) {
            return new Footer(path, reader.getFooter());
        } catch (IOException | RuntimeException e) {
            throw new UncheckedIOException(String.format(Locale.ROOT, "%s: cannot read its Parquet footer: %s", path,
                    e.getMessage()), e instanceof IOException io ? io : new IOException(e));
        }
    }
}
