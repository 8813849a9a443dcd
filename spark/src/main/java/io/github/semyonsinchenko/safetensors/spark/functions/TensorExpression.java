package io.github.semyonsinchenko.safetensors.spark.functions;

import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.RuntimeReplaceable;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.types.DataType;
import scala.Enumeration;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * One call of a {@link TensorFunction} as it stands in a plan until the optimizer replaces it
 * (Spark's {@code RuntimeReplaceable}) with a {@code StaticInvoke} of {@link TensorFunctionEval}, which
 * whole-stage code generation compiles into a direct static call per row.
 *
 * <p>Written in Java against the Scala trait: the trait's {@code val nodePatterns} is set through
 * its generated setter by {@code RuntimeReplaceable.$init$}; where {@link Expression} declares
 * the same member as the trait, this class delegates to the replacement as the trait does.
 */
public final class TensorExpression extends Expression implements RuntimeReplaceable {
    /** The function called. */
    private final TensorFunction function;
    /** The arguments, as written in the query. */
    private final Seq<Expression> arguments;
    /** The trait's {@code nodePatterns}, set by {@code RuntimeReplaceable.$init$}. */
    private Seq<Enumeration.Value> nodePatterns;
    private transient Expression replacement;

    /**
     * A call of {@code function}; the arguments are checked at analysis
     * ({@link #checkInputDataTypes()}).
     *
     * @param function the function called
     * @param arguments its arguments, as written in the query
     */
    public TensorExpression(TensorFunction function, Seq<Expression> arguments) {
        this.function = Objects.requireNonNull(function, "function");
        this.arguments = Objects.requireNonNull(arguments, "arguments");
        RuntimeReplaceable.$init$(this);
    }

    /**
     * The function called.
     *
     * @return the function
     */
    public TensorFunction function() {
        return function;
    }

    private List<Expression> args() {
        return CollectionConverters.asJava(arguments);
    }

    // ------------------------------------------------------------------ RuntimeReplaceable

    @Override
    public Expression replacement() {
        if (replacement == null) {
            replacement = function.replacement(args());
        }
        return replacement;
    }

    @Override
    public Seq<Enumeration.Value> nodePatterns() {
        return nodePatterns;
    }

    @Override
    public void org$apache$spark$sql$catalyst$expressions$RuntimeReplaceable$_setter_$nodePatterns_$eq(
            Seq<Enumeration.Value> patterns) {
        this.nodePatterns = patterns;
    }

    @Override
    public TypeCheckResult checkInputDataTypes() {
        String problem = function.checkArguments(args());
        return problem == null ? TypeCheckResult.TypeCheckSuccess$.MODULE$ : new TypeCheckResult.TypeCheckFailure(problem);
    }

    @Override
    public DataType dataType() {
        return function.resultType();
    }

    @Override
    public boolean nullable() {
        return true;
    }

    @Override
    public Object eval(InternalRow input) {
        return replacement().eval(input);
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return replacement().genCode(ctx);
    }

    @Override
    public Expression canonicalized() {
        // The replacement exists only once the arguments are resolved and valid.
        return resolved() ? replacement().canonicalized() : super.canonicalized();
    }

    // ------------------------------------------------------------------ tree node

    @Override
    public Seq<Expression> children() {
        return arguments;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return new TensorExpression(function, newChildren.toList());
    }

    @Override
    public String prettyName() {
        return function.sqlName;
    }

    @Override
    public String sql() {
        return function.sqlName + args().stream().map(Expression::sql).collect(Collectors.joining(", ", "(", ")"));
    }

    @Override
    public String toString() {
        return function.sqlName + args().stream().map(Object::toString).collect(Collectors.joining(", ", "(", ")"));
    }

    @Override
    public int productArity() {
        return 2;
    }

    @Override
    public Object productElement(int n) {
        return switch (n) {
            case 0 -> function;
            case 1 -> arguments;
            default -> throw new IndexOutOfBoundsException(n);
        };
    }

    @Override
    public boolean canEqual(Object that) {
        return that instanceof TensorExpression;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TensorExpression t && t.function == function && t.arguments.equals(arguments);
    }

    @Override
    public int hashCode() {
        return Objects.hash(function, arguments);
    }
}
