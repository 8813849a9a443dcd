package io.github.semyonsinchenko.safetensors.preprocess.input;

import static io.github.semyonsinchenko.safetensors.preprocess.BuildContext.ROW;
import static io.github.semyonsinchenko.safetensors.preprocess.input.SparkColumns.ref;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.raise_error;
import static org.apache.spark.sql.functions.when;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Stage 1, one input table: its normalized Dataset and where it sits in the global row and column
 * order. {@code raw} is the Parquet data as read (task queries run on it); {@code df} has {@code __row} (position in the Parquet file, or in the files of a
 * directory sorted by path) and, per schema column {@code j}: {@code v<j>} (source non-null),
 * {@code c<j>} (the cast value), {@code k<j>} (an FK cast to i64); plus {@code __pk} and
 * {@code __tc} (the temporal column in µs) when the Parquet data has them.
 */
public record LoadedTable(int index, InputSchema.Table schema, Dataset<Row> raw, Dataset<Row> df, long rows, long rowStart,
        int colStart, boolean[] present, boolean hasPk, boolean hasTemporal) {

    /** Every table of the schema, in schema order. */
    public static List<LoadedTable> loadAll(BuildContext ctx) {
        List<LoadedTable> tables = new ArrayList<>();
        long rowStart = 0;
        int colStart = 0;
        for (int ti = 0; ti < ctx.schema.tables().size(); ti++) {
            LoadedTable t = load(ctx, ti, rowStart, colStart);
            tables.add(t);
            rowStart += t.rows();
            colStart += t.schema().columns().size();
        }
        return tables;
    }

    /** Global row index of the table's last row plus one. */
    public long rowEnd() {
        return rowStart + rows;
    }

    private static LoadedTable load(BuildContext ctx, int ti, long rowStart, int colStart) {
        InputSchema.Table t = ctx.schema.tables().get(ti);
        Path path = ctx.rawDir.resolve(t.name() + ".parquet");
        if (!Files.exists(path)) {
            throw new PreprocessException(path + ": missing; table '" + t.name() + "' of the schema has no Parquet"
                    + " file or directory");
        }
        // Row counts from the footers: a job grouping _metadata.file_path cost a second per table.
        ParquetFiles.Input input = ParquetFiles.read(ctx.spark, path, "table '" + t.name() + "'");
        Dataset<Row> raw = input.raw();
        List<ParquetFiles.File> sortedFiles = input.files();
        StructType rawSchema = raw.schema();
        Dataset<Row> withMeta = raw.select(col("*"), col("_metadata.file_path").as("__file"),
                col("_metadata.row_index").as("__ri"));
        long rows = 0;
        Column rowIndex = col("__ri");
        if (sortedFiles.size() > 1) {
            Column offset = null;
            for (ParquetFiles.File f : sortedFiles) {
                offset = offset == null ? when(col("__file").equalTo(f.path()), lit(rows))
                        : offset.when(col("__file").equalTo(f.path()), lit(rows));
                rows += f.rows();
            }
            // A row from a file missing from the list would get no number: fail rather than write garbage.
            rowIndex = rowIndex.plus(offset.otherwise(raise_error(concat(lit("table '" + t.name()
                    + "': a row of a file its file list does not name: "), col("__file")))));
        } else if (sortedFiles.size() == 1) {
            rows = sortedFiles.getFirst().rows();
        }
        if (rowStart + rows > BuildContext.U32_LIMIT) {
            throw new PreprocessException(String.format(Locale.ROOT,
                    "%s: %d rows in all exceeds the format's 32-bit row index", path, rowStart + rows));
        }
        List<Column> cols = new ArrayList<>();
        cols.add(rowIndex.as(ROW));
        boolean[] present = new boolean[t.columns().size()];
        for (int j = 0; j < t.columns().size(); j++) {
            InputSchema.Column c = t.columns().get(j);
            String where = "table '" + t.name() + "', column '" + c.name() + "'";
            present[j] = SparkColumns.hasField(rawSchema, c.name());
            DataType type = present[j] ? rawSchema.apply(c.name()).dataType() : DataTypes.NullType;
            Column src = present[j] ? ref(c.name()) : lit(null);
            if (c.stype() != SemanticType.IGNORED) {
                cols.add(src.isNotNull().as("v" + j));
            }
            if (c.stype() != SemanticType.IGNORED && c.stype() != SemanticType.IDENTIFIER) {
                cols.add(SparkColumns.value(c.stype(), src, type, where).as("c" + j));
            }
            if (c.foreignKey() != null && present[j]) {
                cols.add(SparkColumns.key(src, type, where).as("k" + j));
            }
        }
        boolean hasPk = t.primaryKey() != null && SparkColumns.hasField(rawSchema, t.primaryKey());
        if (hasPk) {
            cols.add(SparkColumns.key(ref(t.primaryKey()), rawSchema.apply(t.primaryKey()).dataType(),
                    "table '" + t.name() + "', primary key '" + t.primaryKey() + "'").as("__pk"));
        }
        boolean hasTemporal = t.temporalColumn() != null && SparkColumns.hasField(rawSchema, t.temporalColumn());
        if (hasTemporal) {
            cols.add(SparkColumns.micros(ref(t.temporalColumn()), rawSchema.apply(t.temporalColumn()).dataType(),
                    "table '" + t.name() + "', temporal column '" + t.temporalColumn() + "'").as("__tc"));
        }
        Dataset<Row> df = withMeta.select(cols.toArray(Column[]::new));
        ctx.info(String.format(Locale.ROOT, "%s: %d rows, %d columns (rows [%d, %d), columns [%d, %d)), %d file(s)",
                t.name(), rows, t.columns().size(), rowStart, rowStart + rows, colStart,
                colStart + t.columns().size(), sortedFiles.size()));
        return new LoadedTable(ti, t, raw, df, rows, rowStart, colStart, present, hasPk, hasTemporal);
    }

    /** Numerical and timestamp columns present in the Parquet data. */
    public int[] statColumns() {
        List<Integer> js = new ArrayList<>();
        for (int j = 0; j < schema.columns().size(); j++) {
            SemanticType s = schema.columns().get(j).stype();
            if (present[j] && (s == SemanticType.NUMERICAL || s == SemanticType.TIMESTAMP)) {
                js.add(j);
            }
        }
        return js.stream().mapToInt(Integer::intValue).toArray();
    }
}
