package io.github.semyonsinchenko.safetensors.preprocess;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.embed.EmbedderSpec;
import io.github.semyonsinchenko.safetensors.preprocess.text.TextVocabulary;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.TableData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The encoder takes a text column's null bits from the vocabulary's cells, not from the Parquet
 * data: an empty string and a value longer than the cut are non-null (the cut one without an
 * index), a null is not, whether the driver or the cell ranges rank the first occurrences.
 */
class TextNullsTest {

    @TempDir
    Path dataDir;

    private static final String LONG = "é".repeat(1500); // 3000 bytes, cut to 1024 "é"
    private static final String CUT = "é".repeat(1024);
    /** Column A's values in row order; B is all null; C is in the schema only. */
    private static final String[] A = {"a", null, "", LONG, "a", null, CUT, "b", null, ""};

    @Test
    void nullBitsAndIndicesRankedOnTheDriver() throws IOException {
        check(null);
    }

    @Test
    void nullBitsAndIndicesRankedInCellRanges() throws IOException {
        check("0");
    }

    private void check(String broadcastCells) throws IOException {
        SparkSession spark = SparkTestSession.get();
        StructType type = new StructType().add("Id", DataTypes.LongType).add("A", DataTypes.StringType)
                .add("B", DataTypes.StringType).add("N", DataTypes.DoubleType);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < A.length; i++) {
            rows.add(RowFactory.create((long) i, A[i], null, (double) i));
        }
        spark.createDataFrame(rows, type).coalesce(1).write().parquet(dataDir.resolve("raw/tn/t.parquet").toString());
        Files.createDirectories(dataDir.resolve("metadata"));
        Files.writeString(dataDir.resolve("metadata/tn.json"), """
                {"name": "tn", "tables": {"t": {"primary_key": "Id", "columns": {
                  "Id": {"stype": "identifier"}, "A": {"stype": "text"}, "B": {"stype": "text"},
                  "C": {"stype": "text"}, "N": {"stype": "numerical"}}}},
                 "tasks": {}}
                """);
        List<String> progress = new ArrayList<>();
        if (broadcastCells != null) {
            spark.conf().set(TextVocabulary.BROADCAST_CELLS_CONF, broadcastCells);
        }
        DatabaseMetadata m;
        try {
            m = Preprocessor.run(spark, dataDir, "tn", Preprocessor.Options.defaults(EmbedderSpec.none())
                    .withRowsPerPartition(3).withProgress(progress::add));
        } finally {
            spark.conf().unset(TextVocabulary.BROADCAST_CELLS_CONF);
        }
        assertTrue(progress.stream().anyMatch(p -> p.contains(broadcastCells == null ? "ranked on the driver"
                : "ranked in")), progress::toString);
        // The vocabulary in first-occurrence order: "a", "", the cut of LONG (= CUT), "b".
        int[] index = {0, 0, 1, 0, 0, 0, 2, 3, 0, 1};
        try (Database db = Database.open(dataDir.resolve("processed/tn"))) {
            TableData t = db.table(0);
            for (int row = 0; row < A.length; row++) {
                assertEquals(A[row] != null, t.isValid(1, row), "A, row " + row);
                assertEquals(index[row], t.embeddingIndex(1, row), "A, row " + row);
                assertEquals(false, t.isValid(2, row), "B, row " + row);
                assertEquals(0, t.embeddingIndex(2, row), "B, row " + row);
                assertEquals(false, t.isValid(3, row), "C, row " + row);
            }
        }
        assertEquals(new ColumnStats.Text(3), m.columnStats().get(1));
        assertEquals(new ColumnStats.Text(A.length), m.columnStats().get(2));
        assertEquals(new ColumnStats.Text(0), m.columnStats().get(3), "a column missing from the data has no nulls");
    }
}
