package io.github.semyonsinchenko.safetensors.preprocess.task;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.PreprocessException;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.input.SparkColumns;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.TimestampAddInterval;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.Repartition;
import org.apache.spark.sql.catalyst.plans.logical.Sort;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DayTimeIntervalType;
import scala.Function1;
import scala.runtime.AbstractPartialFunction;

/** Task queries in Spark SQL, with headwater's rewrite of {@code '<table>.parquet'} literals. */
public final class TaskQueries {
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
     * while analyzing), its TIMESTAMP_NTZ interval arithmetic as additions
     * ({@link #withNtzIntervalArithmetic}); a query Spark SQL cannot analyze fails here, naming the task.
     */
    public static Dataset<Row> analyze(BuildContext ctx, List<LoadedTable> tables, InputSchema.Task task) {
        String where = "task '" + task.name() + "'";
        List<String> names = ctx.schema.tables().stream().map(InputSchema.Table::name).toList();
        for (LoadedTable t : tables) {
            t.raw().createOrReplaceTempView(t.schema().name());
        }
        String query = rewrite(task.query(), names);
        Dataset<Row> analyzed;
        try {
            analyzed = ctx.spark.sql(query); // analyzed now; the plan keeps the relations, not the view names
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
        return withNtzIntervalArithmetic(analyzed);
    }

    /**
     * The query with every {@code TIMESTAMP_NTZ ± day-time INTERVAL} computed as what it is, an
     * addition of microseconds ({@link SparkColumns#microsSum}: an overflow fails as Spark's does),
     * where Spark builds a {@code ZonedDateTime} per value even for a type without a time zone
     * (in UTC, where no day is shorter or longer, so the results are the same). Those objects were a
     * visible share of a large build's CPU, mostly for tasks such as
     * {@code c.CreationDate <= p.CreationDate + INTERVAL '30 days'} in a join (bench/results/preprocess.md,
     * session 10). Other timestamp arithmetic (with a time zone, or month intervals) is left to Spark.
     */
    static Dataset<Row> withNtzIntervalArithmetic(Dataset<Row> query) {
        LogicalPlan plan = analyzed(query);
        LogicalPlan rewritten = plan.transformAllExpressions(new AbstractPartialFunction<Expression, Expression>() {
            @Override
            public boolean isDefinedAt(Expression e) {
                return e instanceof TimestampAddInterval t && t.start().dataType() == DataTypes.TimestampNTZType
                        && t.interval().dataType() instanceof DayTimeIntervalType;
            }

            @Override
            public <A1 extends Expression, B1> B1 applyOrElse(A1 e, Function1<A1, B1> otherwise) {
                if (!isDefinedAt(e)) {
                    return otherwise.apply(e);
                }
                TimestampAddInterval t = (TimestampAddInterval) e;
                @SuppressWarnings("unchecked")
                B1 sum = (B1) SparkColumns.microsSum(t.start(), t.interval(), DataTypes.TimestampNTZType);
                return sum;
            }
        });
        return rewritten == plan ? query : withPlan(query, rewritten); // a transform with no match returns its input
    }

    /**
     * The query with its final {@code ORDER BY} sorted in one partition, when the analyzed plan
     * ends in a global sort (under at most a projection); any other query as it is. Spark
     * range-partitions a global sort, and to find the ranges it first runs the sort's input once
     * more to sample its keys: for a join and aggregation under the sort, the whole join again.
     * Gathered in one partition the rows are sorted once, with nothing sampled. The caller uses this
     * only while the anchor table is small enough for its key map to be broadcast, which bounds
     * the seeds of the usual one-row-per-anchor task; Spark's sorter spills a larger result to disk.
     */
    static Dataset<Row> sortedInOnePartition(Dataset<Row> query) {
        LogicalPlan rewritten = sortedInOnePartition(analyzed(query));
        return rewritten == null ? query : withPlan(query, rewritten);
    }

    private static LogicalPlan analyzed(Dataset<Row> query) {
        return ((org.apache.spark.sql.classic.Dataset<Row>) query).queryExecution().analyzed();
    }

    /** A Dataset of {@code plan}, a rewritten analyzed plan of {@code query}, in its session. */
    private static Dataset<Row> withPlan(Dataset<Row> query, LogicalPlan plan) {
        return org.apache.spark.sql.classic.Dataset$.MODULE$.ofRows(
                (org.apache.spark.sql.classic.SparkSession) query.sparkSession(), plan);
    }

    /** The plan with its global sort made local over one partition, or null when it does not end in one. */
    static LogicalPlan sortedInOnePartition(LogicalPlan plan) {
        if (plan instanceof Sort sort && sort.global()) {
            return new Sort(sort.order(), false, new Repartition(1, true, sort.child()), sort.hint());
        }
        if (plan instanceof Project project) {
            LogicalPlan child = project.child() instanceof Sort ? sortedInOnePartition(project.child()) : null;
            return child == null ? null : new Project(project.projectList(), child);
        }
        return null;
    }
}
