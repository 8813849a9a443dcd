package io.github.semyonsinchenko.safetensors.io;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * A shell-style pattern over tensor names, with Python's {@code fnmatch} rules (what a Hugging Face
 * user filters {@code state_dict} keys with): {@code *} matches any run of characters, dots
 * included; {@code ?} one character; {@code [abc]}, {@code [a-z]} one of a set, {@code [!abc]} one
 * not in it; everything else itself, case-sensitively. The whole name must match:
 * {@code model.layers.1*.mlp.*} matches {@code model.layers.12.mlp.up_proj.weight}.
 */
public final class NameGlob implements Predicate<String> {
    private final String glob;
    private final Pattern pattern;

    private NameGlob(String glob, Pattern pattern) {
        this.glob = glob;
        this.pattern = pattern;
    }

    /**
     * Compiles {@code glob}.
     *
     * @param glob the pattern
     * @return the compiled pattern
     * @throws IllegalArgumentException if a {@code [} is never closed
     */
    public static NameGlob of(String glob) {
        Objects.requireNonNull(glob, "glob");
        StringBuilder re = new StringBuilder();
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            switch (c) {
                case '*' -> re.append(".*");
                case '?' -> re.append('.');
                case '[' -> {
                    int close = glob.indexOf(']', i + 2); // a ']' right after '[' or '[!' is literal
                    if (close < 0) {
                        throw new IllegalArgumentException(String.format(Locale.ROOT,
                                "glob \"%s\": the '[' at position %d is never closed", glob, i));
                    }
                    String set = glob.substring(i + 1, close);
                    boolean negate = set.startsWith("!");
                    if (negate) {
                        set = set.substring(1);
                    }
                    re.append(negate ? "[^" : "[");
                    for (char s : set.toCharArray()) {
                        if ("\\[]^&".indexOf(s) >= 0) { // special inside a regex class; '-' keeps its meaning
                            re.append('\\');
                        }
                        re.append(s);
                    }
                    re.append(']');
                    i = close;
                }
                default -> re.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return new NameGlob(glob, Pattern.compile(re.toString(), Pattern.DOTALL));
    }

    /**
     * A predicate true for names matching any of {@code globs} (false for none given).
     *
     * @param globs the patterns
     * @return the predicate
     */
    public static Predicate<String> anyOf(List<String> globs) {
        List<NameGlob> compiled = globs.stream().map(NameGlob::of).toList();
        return name -> {
            for (NameGlob g : compiled) {
                if (g.test(name)) {
                    return true;
                }
            }
            return false;
        };
    }

    /** Whether the whole of {@code name} matches. */
    @Override
    public boolean test(String name) {
        return pattern.matcher(name).matches();
    }

    /** {@return the pattern as given} */
    public String glob() {
        return glob;
    }

    @Override
    public String toString() {
        return glob;
    }
}
