package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.NameGlob;
import io.github.semyonsinchenko.safetensors.io.Slice;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Which tensors of a checkpoint to load, and which part of each: decided before planning, so the
 * plan reads only the bytes the selected slices need ({@link ChunkPlan#of(List, TensorSelection, long,
 * int, long, boolean)}). Immutable; each method returns a new selection.
 *
 * <pre>{@code
 * TensorSelection.globs("model.layers.1[0-9].*")                  // one pipeline stage's layers
 *         .slice("model.embed_tokens.weight", Slice.parse("0:32000"))  // part of one tensor
 * TensorSelection.names(List.of("lm_head.weight"))                 // exactly these; a missing one is an error
 * TensorSelection.all().slices(TensorParallel.of(4, rank)::sliceOf)    // every rank its block
 * }</pre>
 *
 * <p>Names are matched against the tensors of every file of the checkpoint. Tensors not selected
 * are never read (their bytes may still be read inside a request when they sit in a gap smaller
 * than {@link LoaderConfig#gapBytes()} between selected bytes, which costs less than a request).
 */
public final class TensorSelection {
    private static final TensorSelection ALL = new TensorSelection(name -> true, Set.of(), "all tensors", Map.of(),
            info -> null);

    private final Predicate<String> names;
    private final Set<String> required;
    private final String description;
    private final Map<String, Slice> slices;
    private final Function<TensorInfo, Slice> sliceRule;

    private TensorSelection(Predicate<String> names, Set<String> required, String description,
                            Map<String, Slice> slices, Function<TensorInfo, Slice> sliceRule) {
        this.names = names;
        this.required = required;
        this.description = description;
        this.slices = slices;
        this.sliceRule = sliceRule;
    }

    /** {@return every tensor, whole (the default)} */
    public static TensorSelection all() {
        return ALL;
    }

    /**
     * Exactly the tensors named; opening the loader fails with a {@link java.util.NoSuchElementException}
     * listing any name no file of the checkpoint has.
     *
     * @param names the tensors
     * @return the selection
     */
    public static TensorSelection names(Collection<String> names) {
        Set<String> set = Set.copyOf(new LinkedHashSet<>(names));
        return new TensorSelection(set::contains, set, "the tensors " + names, Map.of(), info -> null);
    }

    /**
     * The tensors whose name matches any of {@code globs} (Python {@code fnmatch} rules, see {@link NameGlob}).
     *
     * @param globs the patterns, at least one
     * @return the selection
     */
    public static TensorSelection globs(List<String> globs) {
        if (globs.isEmpty()) {
            throw new IllegalArgumentException("no glob given");
        }
        return new TensorSelection(NameGlob.anyOf(globs), Set.of(), "the tensors matching " + globs, Map.of(),
                info -> null);
    }

    /**
     * {@link #globs(List)} of the arguments.
     *
     * @param globs the patterns, at least one
     * @return the selection
     */
    public static TensorSelection globs(String... globs) {
        return globs(List.of(globs));
    }

    /**
     * The tensors whose name {@code test} accepts.
     *
     * @param test accepts the names to load
     * @return the selection
     */
    public static TensorSelection matching(Predicate<String> test) {
        Objects.requireNonNull(test, "test");
        return new TensorSelection(test, Set.of(), "the tensors " + test, Map.of(), info -> null);
    }

    /**
     * This selection with {@code slice} of tensor {@code name} only (it must be selected). A slice
     * given by name wins over {@link #slices(Function)}.
     *
     * @param name a selected tensor
     * @param slice its part to load
     * @return the new selection
     */
    public TensorSelection slice(String name, Slice slice) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(slice, "slice");
        Map<String, Slice> more = new HashMap<>(slices);
        more.put(name, slice);
        return new TensorSelection(names, required, description, Map.copyOf(more), sliceRule);
    }

    /**
     * This selection with the slice {@code rule} gives each selected tensor from its header entry
     * (shape, dtype, name); null or {@link Slice#whole()} loads the tensor whole. E.g.
     * {@code TensorParallel::sliceOf}.
     *
     * @param rule a tensor's slice from its header entry
     * @return the new selection
     */
    public TensorSelection slices(Function<TensorInfo, Slice> rule) {
        Objects.requireNonNull(rule, "rule");
        return new TensorSelection(names, required, description, slices, rule);
    }

    /**
     * Whether tensor {@code name} is selected.
     *
     * @param name a tensor name
     * @return whether it is selected
     */
    public boolean selects(String name) {
        return names.test(name);
    }

    /**
     * The slice of a selected tensor: the one given by name, else the rule's, else {@link Slice#whole()}.
     *
     * @param info a selected tensor's header entry
     * @return its slice
     */
    public Slice sliceOf(TensorInfo info) {
        Slice s = slices.get(info.name());
        if (s == null) {
            s = sliceRule.apply(info);
        }
        return s == null ? Slice.whole() : s;
    }

    /** The names that must exist ({@link #names(Collection)}), and every name given a slice. */
    Set<String> required() {
        Set<String> all = new LinkedHashSet<>(required);
        all.addAll(slices.keySet());
        return all;
    }

    @Override
    public String toString() {
        return description + (slices.isEmpty() ? "" : ", slices " + slices);
    }
}
