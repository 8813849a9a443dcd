package io.github.semyonsinchenko.safetensors.preprocess;

import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/** Task queries in Spark SQL, with headwater's rewrite of {@code '<table>.parquet'} literals. */
final class TaskQueries {
    private TaskQueries() {}

    /** headwater's rewrite: {@code '<table>.parquet'} literals become the quoted table name. */
    static String rewrite(String query, List<String> tableNames) {
        String q = query;
        for (String t : tableNames) {
            q = q.replace("'" + t + ".parquet'", "\"" + t + "\"");
        }
        return q;
    }

    /**
     * The task's query as a Dataset over the raw Parquet tables (registered as temporary views
     * while analyzing); a query Spark SQL cannot analyze fails here, naming the task.
     */
    static Dataset<Row> analyze(BuildContext ctx, List<LoadedTable> tables, InputSchema.Task task) {
        String where = "task '" + task.name() + "'";
        List<String> names = ctx.schema.tables().stream().map(InputSchema.Table::name).toList();
        for (LoadedTable t : tables) {
            t.raw().createOrReplaceTempView(t.schema().name());
        }
        String query = rewrite(task.query(), names);
        try {
            return ctx.spark.sql(query); // analyzed now; the plan keeps the relations, not the view names
        } catch (Exception e) { // ParseException, AnalysisException
            throw new PreprocessException(String.format(Locale.ROOT, "%s: Spark SQL cannot run the query (headwater"
                    + " runs task queries in DataFusion and the dialects differ in places, e.g. some function"
                    + " names; here identifiers are case-sensitive and \"double quotes\" quote identifiers): %s%n"
                    + "query: %s", where, e.getMessage(), query), e);
        } finally {
            for (String t : names) {
                ctx.spark.catalog().dropTempView(t);
            }
        }
    }
}
