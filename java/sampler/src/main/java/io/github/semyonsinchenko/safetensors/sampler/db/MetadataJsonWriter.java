package io.github.semyonsinchenko.safetensors.sampler.db;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes {@code metadata.json} as the reference does: its key order, a two-space indent, one
 * element per line, {@code "key": value}, non-finite numbers as null, and f64 values in the
 * reference's shortest round-trip layout.
 */
final class MetadataJsonWriter {
    private MetadataJsonWriter() {}

    /** Writes {@code m} to {@code out} (not closed). */
    static void write(DatabaseMetadata m, OutputStream out) throws IOException {
        DefaultPrettyPrinter pretty = new DefaultPrettyPrinter()
                .withObjectIndenter(new DefaultIndenter("  ", "\n"))
                .withArrayIndenter(new DefaultIndenter("  ", "\n"))
                .withSeparators(Separators.createDefaultInstance()
                        .withObjectFieldValueSpacing(Separators.Spacing.NONE));
        try (JsonGenerator g = new JsonFactory().createGenerator(out, JsonEncoding.UTF8)) {
            g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            g.setPrettyPrinter(new ColonSpace(pretty));
            g.writeStartObject();
            g.writeArrayFieldStart("table_metadata");
            for (TableMetadata t : m.tables()) {
                g.writeStartObject();
                g.writeStringField("name", t.name());
                pair(g, "col_range", t.colStart(), t.colEnd());
                pair(g, "row_range", t.rowStart(), t.rowEnd());
                optionalIndex(g, "pkey_col", t.pkeyCol());
                optionalIndex(g, "temporal_col", t.temporalCol());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeArrayFieldStart("column_metadata");
            for (ColumnMetadata c : m.columns()) {
                g.writeStartObject();
                g.writeStringField("name", c.name());
                g.writeStringField("stype", c.stype().jsonName());
                optionalIndex(g, "fkey_target_col", c.fkeyTargetCol());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeArrayFieldStart("column_stats");
            for (ColumnStats s : m.columnStats()) {
                writeStats(g, s);
            }
            g.writeEndArray();
            g.writeArrayFieldStart("task_metadata");
            for (TaskMetadata t : m.tasks()) {
                g.writeStartObject();
                g.writeStringField("name", t.name());
                g.writeNumberField("anchor_table", t.anchorTable());
                g.writeStringField("target_stype", t.targetStype().jsonName());
                g.writeNumberField("num_seeds", t.numSeeds());
                g.writeFieldName("target_stats");
                writeStats(g, t.targetStats());
                g.writeEndObject();
            }
            g.writeEndArray();
            f64(g, "global_ts_mean_us", m.globalTsMeanUs());
            f64(g, "global_ts_std_us", m.globalTsStdUs());
            g.writeEndObject();
        }
    }

    private static void writeStats(JsonGenerator g, ColumnStats s) throws IOException {
        if (s instanceof ColumnStats.Ignored) {
            g.writeString("Ignored");
            return;
        }
        g.writeStartObject();
        g.writeObjectFieldStart(s.stype().jsonName());
        g.writeNumberField("num_nulls", s.numNulls());
        switch (s) {
            case ColumnStats.Numerical n -> {
                f64(g, "min", n.min());
                f64(g, "max", n.max());
                f64(g, "mean", n.mean());
                f64(g, "std", n.std());
            }
            case ColumnStats.Timestamp t -> {
                g.writeNumberField("min_us", t.minUs());
                g.writeNumberField("max_us", t.maxUs());
                f64(g, "mean_us", t.meanUs());
                f64(g, "std_us", t.stdUs());
            }
            case ColumnStats.Boolean b -> {
                g.writeNumberField("num_true", b.numTrue());
                g.writeNumberField("num_false", b.numFalse());
            }
            case ColumnStats.Categorical c -> {
                g.writeArrayFieldStart("categories");
                for (String cat : c.categories()) {
                    g.writeString(cat);
                }
                g.writeEndArray();
                g.writeNumberField("cat_emb_start", Integer.toUnsignedLong(c.catEmbStart()));
            }
            default -> { }
        }
        g.writeEndObject();
        g.writeEndObject();
    }

    private static void pair(JsonGenerator g, String name, int a, int b) throws IOException {
        g.writeArrayFieldStart(name);
        g.writeNumber(a);
        g.writeNumber(b);
        g.writeEndArray();
    }

    private static void optionalIndex(JsonGenerator g, String name, int idx) throws IOException {
        if (idx < 0) {
            g.writeNullField(name);
        } else {
            g.writeNumberField(name, idx);
        }
    }

    /** Non-finite values become null, as the reference writes them. */
    private static void f64(JsonGenerator g, String name, double v) throws IOException {
        if (Double.isFinite(v)) {
            g.writeFieldName(name);
            g.writeNumber(shortestDecimal(v));
        } else {
            g.writeNullField(name);
        }
    }

    /**
     * The shortest round-trip decimal of a finite {@code v}, laid out as the reference's float
     * printer does: plain notation with a {@code .0} when the decimal point falls within 16 digits
     * ({@code 1700000000000000.0}, {@code 0.001234}), otherwise {@code d.ddde<exp>} ({@code 1e22},
     * {@code 1.5e-7}).
     */
    static String shortestDecimal(double v) {
        if (v == 0) {
            return (1 / v < 0) ? "-0.0" : "0.0";
        }
        // Double.toString gives the shortest digits that round-trip (JDK 19+); only the layout differs.
        java.math.BigDecimal d = new java.math.BigDecimal(Double.toString(Math.abs(v))).stripTrailingZeros();
        String digits = d.unscaledValue().toString();
        int length = digits.length();
        int k = -d.scale();          // v = digits * 10^k
        int kk = length + k;         // the decimal point sits after kk digits
        StringBuilder out = new StringBuilder(v < 0 ? "-" : "");
        if (k >= 0 && kk <= 16) {
            out.append(digits).append("0".repeat(k)).append(".0");
        } else if (kk > 0 && kk <= 16) {
            out.append(digits, 0, kk).append('.').append(digits, kk, length);
        } else if (kk > -5 && kk <= 0) {
            out.append("0.").append("0".repeat(-kk)).append(digits);
        } else if (length == 1) {
            out.append(digits).append('e').append(kk - 1);
        } else {
            out.append(digits.charAt(0)).append('.').append(digits, 1, length).append('e').append(kk - 1);
        }
        return out.toString();
    }

    /** serde's pretty printer writes {@code "key": value}: no space before the colon, one after. */
    private static final class ColonSpace extends DefaultPrettyPrinter {
        private static final long serialVersionUID = 1L;

        ColonSpace(DefaultPrettyPrinter base) {
            super(base);
        }

        @Override
        public DefaultPrettyPrinter createInstance() {
            return new ColonSpace(this);
        }

        @Override
        public void writeObjectFieldValueSeparator(JsonGenerator g) throws IOException {
            g.writeRaw(": ");
        }
    }
}
