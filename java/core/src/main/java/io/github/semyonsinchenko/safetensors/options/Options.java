package io.github.semyonsinchenko.safetensors.options;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SequencedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Settings given as names and string values, read strictly: the one parser of the Spark read and
 * write options, the dataset's commit policy, the loader's properties and variables, the
 * preprocessor's session settings and the CLI's key=value options.
 *
 * <ul>
 *   <li>Names are case-insensitive. {@link #requireKnown} refuses a name nobody reads, suggesting
 *       the closest valid one ({@code bach_size}: did you mean {@code batch_size}?).</li>
 *   <li>Values are trimmed, then read as what the option is: {@code true}/{@code false} only (any
 *       case), whole numbers in a range (underscores allowed between digits), a choice among
 *       spellings, a duration. Anything else is an {@link OptionException} naming the surface, the
 *       option, the value and what is allowed; an absent option takes its default.</li>
 * </ul>
 */
public final class Options {
    private final String surface;
    private final Map<String, String> values;

    private Options(String surface, Map<String, String> values) {
        this.surface = surface;
        this.values = values;
    }

    /**
     * The options {@code raw} of {@code surface}; null values count as absent.
     *
     * @param surface what takes the options, for messages (e.g. "safetensors write")
     * @param raw the names and values as given
     * @return the options
     */
    public static Options of(String surface, Map<String, String> raw) {
        Objects.requireNonNull(surface, "surface");
        Map<String, String> values = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        raw.forEach((k, v) -> {
            if (k != null && v != null) {
                values.put(k, v);
            }
        });
        return new Options(surface, values);
    }

    /**
     * Refuses the first name that is neither in {@code known} (case-insensitive) nor accepted by
     * {@code passThrough}, naming the closest known one when it is close.
     *
     * @param known every name the surface reads
     * @param passThrough names read by someone else (e.g. Hadoop settings), or {@code name -> false}
     * @return these options
     * @throws OptionException for an unknown name
     */
    public Options requireKnown(Collection<String> known, Predicate<String> passThrough) {
        Collection<String> lower = known.stream().map(k -> k.toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
        for (String name : values.keySet()) {
            if (lower.contains(name.toLowerCase(Locale.ROOT)) || passThrough.test(name)) {
                continue;
            }
            TreeSet<String> sorted = new TreeSet<>(known);
            String closest = null;
            int best = Integer.MAX_VALUE;
            for (String k : sorted) {
                int d = distance(name.toLowerCase(Locale.ROOT), k.toLowerCase(Locale.ROOT));
                if (d < best) {
                    best = d;
                    closest = k;
                }
            }
            boolean close = closest != null && best <= Math.max(2, name.length() / 3);
            throw new OptionException(name, null, String.join(", ", sorted), "unknown " + surface + " option '" + name + "'"
                    + (close ? "; did you mean '" + closest + "'?" : "") + " (valid: " + String.join(", ", sorted)
                    + ")");
        }
        return this;
    }

    /**
     * {@return whether {@code name} is given}
     *
     * @param name the option
     */
    public boolean has(String name) {
        return values.containsKey(name);
    }

    /**
     * The value as given (untrimmed), or {@code dflt} when absent.
     *
     * @param name the option
     * @param dflt the default
     * @return the value
     */
    public String string(String name, String dflt) {
        return values.getOrDefault(name, dflt);
    }

    /**
     * {@code true} or {@code false} in any case; nothing else.
     *
     * @param name the option
     * @param dflt the default
     * @return the value
     * @throws OptionException for any other value
     */
    public boolean bool(String name, boolean dflt) {
        String v = values.get(name);
        if (v == null) {
            return dflt;
        }
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw bad(name, v, dflt ? "true (default), false" : "true, false (default)");
        };
    }

    /**
     * A whole number in {@code [min, max]}; underscores may separate digits ({@code 64_000_000}).
     *
     * @param name the option
     * @param dflt the default (outside the range: there is none to name, e.g. an option whose presence
     *     chooses a mode)
     * @param min the smallest allowed
     * @param max the largest allowed
     * @param what what the number is, for messages (e.g. "bytes")
     * @return the value
     * @throws OptionException for anything else
     */
    public long longValue(String name, long dflt, long min, long max, String what) {
        String v = values.get(name);
        if (v == null) {
            return dflt;
        }
        String digits = v.trim();
        if (!digits.startsWith("_") && !digits.endsWith("_")) {
            try {
                long n = Long.parseLong(digits.replace("_", ""));
                if (n >= min && n <= max) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
        }
        String range = max == Long.MAX_VALUE || max == Integer.MAX_VALUE ? "at least " + min
                : "from " + min + " to " + max;
        throw bad(name, v, "a whole number of " + what + " " + range
                + (dflt >= min && dflt <= max ? " (default " + dflt + ")" : ""));
    }

    /**
     * {@link #longValue} for an int option.
     *
     * @param name the option
     * @param dflt the default
     * @param min the smallest allowed
     * @param max the largest allowed
     * @param what what the number is, for messages
     * @return the value
     * @throws OptionException for anything else
     */
    public int intValue(String name, int dflt, int min, int max, String what) {
        return (int) longValue(name, dflt, min, max, what);
    }

    /**
     * One of {@code spellings}' keys (any case), as its value.
     *
     * @param name the option
     * @param dflt the default
     * @param spellings the allowed values in the order messages list them, each with what it means
     * @param <T> what the option chooses
     * @return the value
     * @throws OptionException for anything else
     */
    public <T> T choice(String name, T dflt, SequencedMap<String, T> spellings) {
        String v = values.get(name);
        if (v == null) {
            return dflt;
        }
        String given = v.trim();
        for (Map.Entry<String, T> e : spellings.entrySet()) {
            if (e.getKey().equalsIgnoreCase(given)) {
                return e.getValue();
            }
        }
        throw bad(name, v, spellings.entrySet().stream()
                .map(e -> e.getKey() + (Objects.equals(e.getValue(), dflt) ? " (default)" : ""))
                .collect(Collectors.joining(", ")));
    }

    /**
     * The spellings of an enum's constants for {@link #choice}: each name in lower case, in
     * declaration order.
     *
     * @param type the enum
     * @param <E> the enum
     * @return lower-case name to constant
     */
    public static <E extends Enum<E>> SequencedMap<String, E> lowerCaseNames(Class<E> type) {
        SequencedMap<String, E> out = new LinkedHashMap<>();
        for (E e : type.getEnumConstants()) {
            out.put(e.name().toLowerCase(Locale.ROOT), e);
        }
        return out;
    }

    /**
     * A duration: {@code 250ms}, {@code 90s}, {@code 30m}, {@code 12h}, {@code 7d}, or a plain number
     * of seconds; not negative.
     *
     * @param name the option
     * @param dflt the default
     * @return the value
     * @throws OptionException for anything else
     */
    public Duration duration(String name, Duration dflt) {
        String v = values.get(name);
        if (v == null) {
            return dflt;
        }
        String s = v.trim().toLowerCase(Locale.ROOT);
        try {
            Duration d;
            if (s.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
            } else if (!s.isEmpty()) {
                char unit = s.charAt(s.length() - 1);
                long n = Long.parseLong(Character.isDigit(unit) ? s : s.substring(0, s.length() - 1));
                d = switch (unit) {
                    case 's' -> Duration.ofSeconds(n);
                    case 'm' -> Duration.ofMinutes(n);
                    case 'h' -> Duration.ofHours(n);
                    case 'd' -> Duration.ofDays(n);
                    default -> {
                        if (!Character.isDigit(unit)) {
                            throw new NumberFormatException(v);
                        }
                        yield Duration.ofSeconds(n);
                    }
                };
            } else {
                d = null;
            }
            if (d != null && !d.isNegative()) {
                return d;
            }
        } catch (NumberFormatException | ArithmeticException e) {
            // reported below
        }
        throw bad(name, v, "a duration such as 90s, 30m, 12h or 7d");
    }

    /**
     * The exception for a value of {@code name} that breaks a rule the caller checks itself.
     *
     * @param name the option
     * @param value the value refused
     * @param allowed what is allowed instead
     * @return the exception to throw
     */
    public OptionException bad(String name, String value, String allowed) {
        return new OptionException(name, value, allowed, String.format(Locale.ROOT, "%s option '%s' is '%s'; allowed: %s",
                surface, name, value, allowed));
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
