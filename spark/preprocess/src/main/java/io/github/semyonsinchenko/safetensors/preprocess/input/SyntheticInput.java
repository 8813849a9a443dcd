package io.github.semyonsinchenko.safetensors.preprocess.input;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData.Column;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData.Table;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData.Task;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Writes the project's synthetic dataset ({@link SyntheticData}) as headwater's input: the schema
 * with its tasks' queries in {@code D/metadata/X.json} and each table, labels included, in
 * {@code D/raw/X/<table>.parquet} (a directory of Parquet files, one per partition, rows in
 * order). The preprocessor builds from it the database {@code SyntheticDatabase} writes directly,
 * up to what the encoding chooses: the text vocabulary's order, the embeddings, and the last bits
 * of the global timestamp statistics (summed per column here, in one run there).
 *
 * <p>Each Spark task regenerates the dataset (it is deterministic, and generating it costs less than
 * shipping it) and writes its rows; an executor keeps the last dataset it generated for its next
 * table.
 */
public final class SyntheticInput {
    private SyntheticInput() {}

    /** The dataset an executor generated last, for its tasks of the other tables. */
    private static SyntheticData cached;
    private static long cachedKey = -1;
    private static long cachedSeed;

    /**
     * Writes the dataset of {@code rows} rows for {@code seed} in headwater's input layout.
     *
     * @param spark the session that writes the tables
     * @param dataDir the data directory, {@code D}
     * @param dataset the dataset's name, {@code X}
     * @param rows about how many rows, at least {@value SyntheticData#MIN_ROWS}
     * @param seed the seed of every value
     * @param files the Parquet files per table
     * @return the dataset written
     */
    public static SyntheticData write(SparkSession spark, Path dataDir, String dataset, int rows, long seed,
            int files) {
        SyntheticData data = dataset(rows, seed);
        Path raw = dataDir.resolve("raw").resolve(dataset);
        for (int t = 0; t < data.tables().size(); t++) {
            Table table = data.tables().get(t);
            StructType schema = sparkSchema(table);
            spark.range(0, table.rows(), 1, Math.max(1, files))
                    .mapPartitions(new TableRows(rows, seed, t), Encoders.row(schema))
                    .write().mode(SaveMode.Overwrite).parquet(raw.resolve(table.name() + ".parquet").toString());
        }
        try {
            Files.createDirectories(dataDir.resolve("metadata"));
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                    .writeValue(dataDir.resolve("metadata").resolve(dataset + ".json").toFile(), schemaJson(data, dataset));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return data;
    }

    /** The dataset, generated once per JVM for a row count and a seed. */
    private static synchronized SyntheticData dataset(int rows, long seed) {
        if (cached == null || cachedKey != rows || cachedSeed != seed) {
            cached = SyntheticData.generate(rows, seed);
            cachedKey = rows;
            cachedSeed = seed;
        }
        return cached;
    }

    /** A table's Spark schema: its columns, then its labels; every field nullable. */
    static StructType sparkSchema(Table table) {
        List<StructField> fields = new ArrayList<>();
        for (Column c : table.rawColumns()) {
            DataType type = switch (c.stype()) {
                case IDENTIFIER -> DataTypes.LongType;
                case NUMERICAL -> DataTypes.DoubleType;
                case TIMESTAMP -> DataTypes.TimestampNTZType;
                case BOOLEAN -> DataTypes.BooleanType;
                case CATEGORICAL, TEXT, IGNORED -> DataTypes.StringType;
            };
            fields.add(DataTypes.createStructField(c.name(), type, true));
        }
        return DataTypes.createStructType(fields);
    }

    /** One partition of a table: the rows whose ids it holds, as Spark rows of the raw values. */
    private record TableRows(int rows, long seed, int table) implements MapPartitionsFunction<Long, Row> {
        @Override
        public Iterator<Row> call(Iterator<Long> ids) {
            List<Column> columns = dataset(rows, seed).tables().get(table).rawColumns();
            return new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return ids.hasNext();
                }

                @Override
                public Row next() {
                    int row = Math.toIntExact(ids.next());
                    Object[] values = new Object[columns.size()];
                    for (int j = 0; j < values.length; j++) {
                        Object v = columns.get(j).value(row);
                        values[j] = v instanceof Long us && columns.get(j).stype() == SemanticType.TIMESTAMP
                                ? localDateTime(us) : v;
                    }
                    return RowFactory.create(values);
                }
            };
        }
    }

    /** Microseconds since the epoch as the wall-clock time of a TIMESTAMP_NTZ value. */
    private static LocalDateTime localDateTime(long micros) {
        return LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
                (int) Math.floorMod(micros, 1_000_000L) * 1000, ZoneOffset.UTC);
    }

    /**
     * The input schema: tables in order with their primary key {@code Id}, temporal column and
     * columns (a foreign key points at its table's {@code Id}); each task a query of its anchor
     * table's rows in row order. A task observed at its anchor row's time leaves
     * {@code observation_time_column} out (the preprocessor then takes the anchor's temporal
     * value); one without an observation time returns a null time column.
     */
    static ObjectNode schemaJson(SyntheticData data, String dataset) {
        ObjectMapper m = new ObjectMapper();
        ObjectNode root = m.createObjectNode();
        root.put("name", dataset);
        ObjectNode tables = root.putObject("tables");
        for (Table t : data.tables()) {
            ObjectNode table = tables.putObject(t.name());
            table.put("primary_key", t.columns().getFirst().name());
            table.put("temporal_column", t.columns().get(t.temporal()).name());
            ObjectNode columns = table.putObject("columns");
            for (Column c : t.columns()) {
                ObjectNode col = columns.putObject(c.name());
                col.put("stype", c.stype().jsonName().toLowerCase(Locale.ROOT));
                if (c.foreignTable() >= 0) {
                    Table target = data.tables().get(c.foreignTable());
                    col.put("foreign_key", target.name() + "." + target.columns().getFirst().name());
                }
            }
        }
        ObjectNode tasks = root.putObject("tasks");
        for (Task task : data.tasks()) {
            Table anchor = data.tables().get(task.anchorTable());
            String key = anchor.columns().getFirst().name();
            String target = task.target().name();
            ObjectNode t = tasks.putObject(task.name());
            String noTime = "no_observation_time";
            t.put("query", String.format(Locale.ROOT, "SELECT %s, %s%s FROM '%s.parquet' ORDER BY %s", key,
                    task.observed() ? "" : "CAST(NULL AS TIMESTAMP) AS " + noTime + ", ", target, anchor.name(), key));
            t.put("anchor_table", anchor.name());
            t.put("anchor_key", key);
            t.put("target_column", target);
            t.put("target_stype", task.target().stype().jsonName().toLowerCase(Locale.ROOT));
            if (!task.observed()) {
                t.put("observation_time_column", noTime);
            }
        }
        return root;
    }
}
