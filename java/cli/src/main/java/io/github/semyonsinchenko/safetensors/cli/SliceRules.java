package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.io.NameGlob;
import io.github.semyonsinchenko.safetensors.io.Slice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The {@code --slice [GLOB=]SLICE} options of {@code slice} and {@code load}: the first rule whose
 * glob matches a tensor's name gives its slice; a rule without {@code GLOB=} matches every tensor.
 */
final class SliceRules {
    private final List<Map.Entry<Predicate<String>, Slice>> rules;

    private SliceRules(List<Map.Entry<Predicate<String>, Slice>> rules) {
        this.rules = rules;
    }

    /**
     * Parses the options.
     *
     * @throws IllegalArgumentException naming the option that is not a glob and a slice
     */
    static SliceRules parse(List<String> options) {
        List<Map.Entry<Predicate<String>, Slice>> rules = new ArrayList<>();
        for (String s : options) {
            int eq = s.indexOf('=');
            try {
                Predicate<String> match = eq < 0 ? name -> true : NameGlob.of(s.substring(0, eq));
                rules.add(Map.entry(match, Slice.parse(eq < 0 ? s : s.substring(eq + 1))));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--slice " + s + ": " + e.getMessage(), e);
            }
        }
        return new SliceRules(rules);
    }

    /** The slice of tensor {@code name}, or null when no rule matches it. */
    Slice sliceOf(String name) {
        for (var rule : rules) {
            if (rule.getKey().test(name)) {
                return rule.getValue();
            }
        }
        return null;
    }
}
