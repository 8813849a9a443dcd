package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Plain-text output shared by the commands: aligned tables and human sizes. */
final class Format {
    private Format() {}

    /** Prints {@code s} as one line and flushes it, so a long step shows each line as it reaches it. */
    static void line(PrintWriter out, String s) {
        out.println(s);
        out.flush();
    }

    static String fmt(String pattern, Object... args) {
        return String.format(Locale.ROOT, pattern, args);
    }

    /** 1,234,567 */
    static String count(long n) {
        return fmt("%,d", n);
    }

    /** Binary units: 512 B, 4.0 KiB, 384.0 MiB, 1.50 GiB. */
    static String size(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return fmt(v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, units[u]);
    }

    static String shape(long[] shape) {
        return Arrays.toString(shape);
    }

    /** Metadata as indented key = value lines, in file order. */
    static void printMetadata(PrintWriter out, Map<String, String> metadata, String indent) {
        if (metadata.isEmpty()) {
            out.println(indent + "(none)");
            return;
        }
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            out.println(indent + e.getKey() + " = " + e.getValue());
        }
    }

    /**
     * The tensor table in offset order: index, name, dtype, shape, bytes and data_offsets, plus an
     * optional extra column (e.g. the demo's verification result).
     */
    static void printTensorTable(PrintWriter out, Header header, String indent, String extraTitle,
                                 List<String> extra) {
        List<String[]> rows = new ArrayList<>();
        rows.add(extraTitle == null
                ? new String[] {"#", "name", "dtype", "shape", "bytes", "data_offsets"}
                : new String[] {"#", "name", "dtype", "shape", "bytes", "data_offsets", extraTitle});
        int i = 0;
        for (TensorInfo t : header.tensors()) {
            String[] row = {
                Integer.toString(i), t.name(), t.dtype().name(), shape(t.shape()), Long.toString(t.byteSize()),
                "[" + t.begin() + ", " + t.end() + "]"
            };
            if (extraTitle != null) {
                row = Arrays.copyOf(row, 7);
                row[6] = extra.get(i);
            }
            rows.add(row);
            i++;
        }
        int cols = rows.getFirst().length;
        int[] width = new int[cols];
        for (String[] row : rows) {
            for (int c = 0; c < cols; c++) {
                width[c] = Math.max(width[c], row[c].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder sb = new StringBuilder(indent);
            for (int c = 0; c < cols; c++) {
                boolean rightAlign = c == 0 || c == 4; // numbers
                String cell = row[c];
                String pad = " ".repeat(width[c] - cell.length());
                sb.append(rightAlign ? pad + cell : c == cols - 1 ? cell : cell + pad);
                if (c < cols - 1) {
                    sb.append("  ");
                }
            }
            out.println(sb);
        }
    }
}
