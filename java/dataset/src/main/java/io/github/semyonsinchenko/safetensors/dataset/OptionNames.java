package io.github.semyonsinchenko.safetensors.dataset;

import java.util.Collection;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * Rejects option names nobody reads, naming the closest valid one ({@code bach_size}: did you mean
 * {@code batch_size}?). Names with a dot ({@code fs.s3a.endpoint}, {@code parquet.*}) are Hadoop or
 * Spark settings that reach the Hadoop configuration, and names starting with {@code __} are
 * Spark's own ({@code __partition_columns}); both pass.
 */
public final class OptionNames {
    private OptionNames() {}

    /**
     * Throws IllegalArgumentException for the first unknown name (case-insensitive).
     *
     * @param given the option names given
     * @param known the names that are read
     * @param what names the options in the message ({@code safetensors write})
     */
    public static void check(Collection<String> given, Set<String> known, String what) {
        Set<String> lower = new TreeSet<>();
        known.forEach(k -> lower.add(k.toLowerCase(Locale.ROOT)));
        for (String name : given) {
            if (name.contains(".") || name.startsWith("__") || lower.contains(name.toLowerCase(Locale.ROOT))) {
                continue;
            }
            String closest = null;
            int best = Integer.MAX_VALUE;
            for (String k : new TreeSet<>(known)) {
                int d = distance(name.toLowerCase(Locale.ROOT), k.toLowerCase(Locale.ROOT));
                if (d < best) {
                    best = d;
                    closest = k;
                }
            }
            throw new IllegalArgumentException("unknown " + what + " option '" + name + "'"
                    + (closest != null && best <= Math.max(2, name.length() / 3) ? "; did you mean '" + closest + "'?"
                            : "") + " (valid: " + String.join(", ", new TreeSet<>(known)) + ")");
        }
    }

    /** Levenshtein distance. */
    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
