package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.spark.tensor.TensorStruct;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A pushed predicate that can be decided from headers alone, in a serializable form the reader
 * factory carries to executors. It may reference {@code tensor_key} (kv), a tensor column itself
 * (only for IS NULL / IS NOT NULL: "is the tensor in this row"), or a tensor's {@code dtype} or
 * {@code shape}. It never references {@code data}: predicates on values stay with Spark.
 *
 * <p>Evaluation follows SQL's three-valued logic ({@code null} = unknown), and a row is kept only
 * when the predicate is {@code TRUE}, exactly as Spark's own Filter would decide, so what is pushed
 * is honoured exactly and Spark need not re-check it.
 */
sealed interface MetaFilter extends Serializable {

    /** TRUE, FALSE or null (unknown). */
    Boolean eval(RowSpec row);

    default boolean accepts(RowSpec row) {
        return Boolean.TRUE.equals(eval(row));
    }

    /** What a reference points at. */
    enum Target { KEY, PRESENT, DTYPE, SHAPE }

    record Ref(String column, Target target) implements Serializable {
        /** The value in {@code row}: a String (key, dtype), an int[] (shape), a Boolean (present), or null. */
        Object value(RowSpec row) {
            if (target == Target.KEY) {
                return row.key();
            }
            TensorRef cell = row.cell(column);
            return switch (target) {
                case PRESENT -> cell != null;
                case DTYPE -> cell == null ? null : cell.dtype();
                case SHAPE -> cell == null ? null : cell.shape();
                case KEY -> throw new AssertionError();
            };
        }
    }

    record Const(Boolean value) implements MetaFilter {
        public Boolean eval(RowSpec row) {
            return value;
        }
    }

    record IsNull(Ref ref, boolean negated) implements MetaFilter {
        public Boolean eval(RowSpec row) {
            Object v = ref.value(row);
            boolean isNull = ref.target() == Target.PRESENT ? !((Boolean) v) : v == null;
            return negated != isNull;
        }
    }

    /**
     * {@code =}, {@code <>} and null-safe {@code <=>} against a literal (null allowed for {@code <=>}).
     *
     * @param ref what is compared
     * @param op {@code "="}, {@code "<>"} or {@code "<=>"}
     * @param literal the literal's value, in the form {@code ref}'s target takes (null only for {@code <=>})
     */
    record Compare(Ref ref, String op, Object literal) implements MetaFilter {
        public Boolean eval(RowSpec row) {
            Object v = ref.value(row);
            if (op.equals("<=>")) {
                return v == null ? literal == null : literal != null && same(v, literal);
            }
            if (v == null || literal == null) {
                return null;
            }
            boolean eq = same(v, literal);
            return op.equals("=") == eq;
        }
    }

    record In(Ref ref, List<Object> literals) implements MetaFilter {
        public Boolean eval(RowSpec row) {
            Object v = ref.value(row);
            if (v == null) {
                return null;
            }
            boolean sawNull = false;
            for (Object l : literals) {
                if (l == null) {
                    sawNull = true;
                } else if (same(v, l)) {
                    return true;
                }
            }
            return sawNull ? null : false;
        }
    }

    /**
     * STARTS_WITH / ENDS_WITH / CONTAINS on a string target.
     *
     * @param ref a string target (key or dtype)
     * @param op {@code "STARTS_WITH"}, {@code "ENDS_WITH"} or {@code "CONTAINS"}
     * @param literal the string matched
     */
    record StringMatch(Ref ref, String op, String literal) implements MetaFilter {
        public Boolean eval(RowSpec row) {
            Object v = ref.value(row);
            if (v == null || literal == null) {
                return null;
            }
            String s = (String) v;
            return switch (op) {
                case "STARTS_WITH" -> s.startsWith(literal);
                case "ENDS_WITH" -> s.endsWith(literal);
                default -> s.contains(literal);
            };
        }
    }

    record And(MetaFilter left, MetaFilter right) implements MetaFilter {
        public Boolean eval(RowSpec row) {
            Boolean l = left.eval(row);
            if (Boolean.FALSE.equals(l)) {
                return false;
            }
            Boolean r = right.eval(row);
            if (Boolean.FALSE.equals(r)) {
                return false;
            }
            return l == null || r == null ? null : true;
        }
    }

    record Or(MetaFilter left, MetaFilter right) implements MetaFilter {
        public Boolean eval(RowSpec row) {
            Boolean l = left.eval(row);
            if (Boolean.TRUE.equals(l)) {
                return true;
            }
            Boolean r = right.eval(row);
            if (Boolean.TRUE.equals(r)) {
                return true;
            }
            return l == null || r == null ? null : false;
        }
    }

    record Not(MetaFilter child) implements MetaFilter {
        public Boolean eval(RowSpec row) {
            Boolean c = child.eval(row);
            return c == null ? null : !c;
        }
    }

    private static boolean same(Object value, Object literal) {
        if (value instanceof int[] a && literal instanceof int[] b) {
            return Arrays.equals(a, b);
        }
        return value.equals(literal);
    }

    // ------------------------------------------------------------ conversion from Spark's predicates

    /** All the conjuncts, joined; TRUE for none. */
    static MetaFilter and(List<MetaFilter> filters) {
        MetaFilter out = null;
        for (MetaFilter f : filters) {
            out = out == null ? f : new And(out, f);
        }
        return out == null ? new Const(true) : out;
    }

    /**
     * Converts a Spark predicate, or returns null when any part of it needs tensor values (or is
     * something we do not evaluate), in which case Spark keeps it.
     */
    static MetaFilter convert(Predicate p, StructType schema, boolean kv) {
        try {
            return doConvert(p, schema, kv);
        } catch (Unsupported e) {
            return null;
        }
    }

    /** The {@code tensor_key} values a top-level conjunct restricts keys to, or null if none does. */
    static Set<String> keyRestriction(MetaFilter f) {
        if (f instanceof And a) {
            Set<String> l = keyRestriction(a.left());
            Set<String> r = keyRestriction(a.right());
            if (l == null) {
                return r;
            }
            if (r == null) {
                return l;
            }
            Set<String> both = new java.util.TreeSet<>(l);
            both.retainAll(r);
            return both;
        }
        if (f instanceof Compare c && c.ref().target() == Target.KEY && c.literal() instanceof String s
                && !c.op().equals("<>")) {
            return Set.of(s);
        }
        if (f instanceof In in && in.ref().target() == Target.KEY) {
            Set<String> out = new java.util.TreeSet<>();
            for (Object o : in.literals()) {
                if (o instanceof String s) {
                    out.add(s);
                }
            }
            return out;
        }
        return null;
    }

    final class Unsupported extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Unsupported() {
            super(null, null, false, false);
        }
    }

    private static MetaFilter doConvert(Predicate p, StructType schema, boolean kv) {
        Expression[] c = p.children();
        switch (p.name()) {
            case "ALWAYS_TRUE":
                return new Const(true);
            case "ALWAYS_FALSE":
                return new Const(false);
            case "AND":
                return new And(doConvert((Predicate) c[0], schema, kv), doConvert((Predicate) c[1], schema, kv));
            case "OR":
                return new Or(doConvert((Predicate) c[0], schema, kv), doConvert((Predicate) c[1], schema, kv));
            case "NOT":
                return new Not(doConvert((Predicate) c[0], schema, kv));
            case "IS_NULL":
            case "IS_NOT_NULL":
                return new IsNull(ref(c[0], schema, kv, true), p.name().equals("IS_NOT_NULL"));
            case "=":
            case "<>":
            case "<=>": {
                boolean refFirst = c[0] instanceof NamedReference;
                Ref r = ref(refFirst ? c[0] : c[1], schema, kv, false);
                Object lit = literal(refFirst ? c[1] : c[0], r);
                if (lit == null && !p.name().equals("<=>")) {
                    return new Const(null);
                }
                return new Compare(r, p.name(), lit);
            }
            case "IN": {
                Ref r = ref(c[0], schema, kv, false);
                List<Object> values = new ArrayList<>();
                for (int i = 1; i < c.length; i++) {
                    values.add(literal(c[i], r));
                }
                return new In(r, values);
            }
            case "STARTS_WITH":
            case "ENDS_WITH":
            case "CONTAINS": {
                Ref r = ref(c[0], schema, kv, false);
                if (r.target() == Target.SHAPE) {
                    throw new Unsupported();
                }
                return new StringMatch(r, p.name(), (String) literal(c[1], r));
            }
            default:
                throw new Unsupported();
        }
    }

    private static Ref ref(Expression e, StructType schema, boolean kv, boolean allowWholeTensor) {
        if (!(e instanceof NamedReference nr)) {
            throw new Unsupported();
        }
        String[] parts = nr.fieldNames();
        StructField top = field(schema, parts[0]);
        if (top == null) {
            throw new Unsupported();
        }
        if (kv && DatasetResolver.isKeyField(top)) {
            if (parts.length != 1) {
                throw new Unsupported();
            }
            return new Ref(null, Target.KEY);
        }
        if (!TensorStruct.is(top.dataType())) {
            throw new Unsupported();
        }
        if (parts.length == 1) {
            if (!allowWholeTensor) {
                throw new Unsupported();
            }
            return new Ref(top.name(), Target.PRESENT);
        }
        if (parts.length != 2) {
            throw new Unsupported();
        }
        if (parts[1].equalsIgnoreCase(TensorStruct.DTYPE)) {
            return new Ref(top.name(), Target.DTYPE);
        }
        if (parts[1].equalsIgnoreCase(TensorStruct.SHAPE)) {
            return new Ref(top.name(), Target.SHAPE);
        }
        throw new Unsupported(); // data: values are Spark's to filter
    }

    private static StructField field(StructType schema, String name) {
        for (StructField f : schema.fields()) {
            if (f.name().equals(name)) {
                return f;
            }
        }
        for (StructField f : schema.fields()) {
            if (f.name().equalsIgnoreCase(name)) {
                return f;
            }
        }
        return null;
    }

    private static Object literal(Expression e, Ref r) {
        if (!(e instanceof Literal<?> lit)) {
            throw new Unsupported();
        }
        Object v = lit.value();
        if (v == null) {
            return null;
        }
        if (r.target() == Target.SHAPE) {
            if (!(lit.dataType() instanceof ArrayType at) || at.elementType() != DataTypes.IntegerType
                    || !(v instanceof ArrayData ad)) {
                throw new Unsupported();
            }
            for (int i = 0; i < ad.numElements(); i++) {
                if (ad.isNullAt(i)) {
                    throw new Unsupported();
                }
            }
            return ad.toIntArray();
        }
        if (lit.dataType() != DataTypes.StringType || !(v instanceof UTF8String s)) {
            throw new Unsupported();
        }
        return s.toString();
    }
}
