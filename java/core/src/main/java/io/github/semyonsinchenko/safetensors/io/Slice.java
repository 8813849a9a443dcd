package io.github.semyonsinchenko.safetensors.io;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Which part of a tensor to read, in numpy's basic-indexing terms: one {@link Index} per dimension
 * from the first, dimensions left out at the end taken whole. What Hugging Face's
 * {@code safe_open(...).get_slice(name)[...]} takes, with steps honoured.
 *
 * <ul>
 *   <li>{@link Range}: {@code start:stop:step}, each part optional; {@code start} and {@code stop}
 *       may be negative, counting from the end as in Python; {@code step} is at least 1. The
 *       dimension stays, with {@code ceil((stop - start) / step)} elements.</li>
 *   <li>{@link At}: one index (negative counts from the end); the dimension is dropped, as
 *       {@code x[3]} drops it in numpy.</li>
 *   <li>{@link #ELLIPSIS}: {@code ...}, as many whole dimensions as the other indexes leave; at most
 *       one.</li>
 * </ul>
 *
 * <p>Unlike numpy, nothing is clamped: a start, stop or index outside the dimension, or a stop
 * before its start, is a {@link SliceOutOfBoundsException} naming the tensor, the dimension and the
 * index, when the slice is applied to a tensor ({@link SliceLayout#of}). A slice holds no tensor and
 * can be applied to any tensor of a fitting rank. Immutable.
 *
 * <pre>{@code
 * Slice.parse(":, 0:128")           // columns 0..127 of a matrix
 * Slice.parse("[0:4096]")           // the first 4096 rows of an embedding (brackets optional)
 * Slice.parse("3, ..., ::2")        // layer 3 of a stacked tensor, every other element of the last dimension
 * Slice.of(Slice.all(), Slice.range(0, 128))
 * Slice.along(1, 256, 512)         // [:, 256:512]
 * }</pre>
 */
public final class Slice {
    /** One entry of a slice: what to take of one dimension ({@link Range}, {@link At}) or {@link #ELLIPSIS}. */
    public sealed interface Index permits Range, At, Ellipsis {
    }

    /**
     * {@code start:stop:step}: elements {@code start, start + step, ...} before {@code stop}.
     *
     * @param start the first element, null for 0; negative counts from the end
     * @param stop one past the last element, null for the dimension's size; negative counts from the end
     * @param step the distance between elements, at least 1
     */
    public record Range(Long start, Long stop, long step) implements Index {
        /** Checks the step; start and stop are checked against a dimension when the slice is applied. */
        public Range {
            if (step < 1) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                        "a slice step must be at least 1, got %d (negative steps are not supported)", step));
            }
        }

        @Override
        public String toString() {
            return (start == null ? "" : start.toString()) + ":" + (stop == null ? "" : stop.toString())
                    + (step == 1 ? "" : ":" + step);
        }
    }

    /**
     * One element of a dimension, which is dropped from the result's shape.
     *
     * @param index the element; negative counts from the end
     */
    public record At(long index) implements Index {
        @Override
        public String toString() {
            return Long.toString(index);
        }
    }

    /** The type of {@link #ELLIPSIS}. */
    public static final class Ellipsis implements Index {
        private Ellipsis() {
        }

        @Override
        public String toString() {
            return "...";
        }
    }

    /** {@code ...}: every dimension the other indexes of the slice do not name, taken whole. */
    public static final Ellipsis ELLIPSIS = new Ellipsis();

    private static final Slice WHOLE = new Slice(List.of());

    private final List<Index> indexes;

    private Slice(List<Index> indexes) {
        this.indexes = List.copyOf(indexes);
        int ellipses = 0;
        for (Index i : this.indexes) {
            if (i instanceof Ellipsis) {
                ellipses++;
            }
        }
        if (ellipses > 1) {
            throw new IllegalArgumentException("a slice may hold at most one '...', got " + this);
        }
    }

    /**
     * The slice made of {@code indexes}, one per dimension from the first.
     *
     * @param indexes one per dimension from the first
     * @return the slice
     */
    public static Slice of(Index... indexes) {
        for (Index i : indexes) {
            Objects.requireNonNull(i, "a slice index");
        }
        return new Slice(List.of(indexes));
    }

    /**
     * The slice made of {@code indexes}, one per dimension from the first.
     *
     * @param indexes one per dimension from the first
     * @return the slice
     */
    public static Slice of(List<? extends Index> indexes) {
        return new Slice(new ArrayList<>(indexes));
    }

    /** {@return the whole tensor ({@code [:]} or {@code []})} */
    public static Slice whole() {
        return WHOLE;
    }

    /** {@return {@code :}, a whole dimension} */
    public static Range all() {
        return new Range(null, null, 1);
    }

    /**
     * {@code start:stop}.
     *
     * @param start the first element (negative counts from the end)
     * @param stop one past the last (negative counts from the end)
     * @return the range
     */
    public static Range range(long start, long stop) {
        return new Range(start, stop, 1);
    }

    /**
     * {@code start:stop:step}.
     *
     * @param start the first element (negative counts from the end)
     * @param stop one past the last (negative counts from the end)
     * @param step the distance between elements, at least 1
     * @return the range
     */
    public static Range range(long start, long stop, long step) {
        return new Range(start, stop, step);
    }

    /**
     * {@code index}: one element, the dimension dropped.
     *
     * @param index the element (negative counts from the end)
     * @return the index
     */
    public static At at(long index) {
        return new At(index);
    }

    /**
     * {@code [start, stop)} along dimension {@code dim}, every other dimension whole: e.g.
     * {@code along(1, 0, 128)} is {@code [:, 0:128]}.
     *
     * @param dim the dimension cut
     * @param start the first element along it
     * @param stop one past the last
     * @return the slice
     * @throws IllegalArgumentException if {@code dim < 0}
     */
    public static Slice along(int dim, long start, long stop) {
        if (dim < 0) {
            throw new IllegalArgumentException("dim must be >= 0, got " + dim);
        }
        List<Index> list = new ArrayList<>(dim + 1);
        for (int d = 0; d < dim; d++) {
            list.add(all());
        }
        list.add(range(start, stop));
        return new Slice(list);
    }

    /**
     * The range of block {@code block} of {@code blocks} of a dimension of {@code size}, as
     * {@code numpy.array_split} cuts it (the first {@code size % blocks} blocks get one element more),
     * so the blocks together cover the dimension exactly once: {@code {start, stop}}.
     *
     * @param size the dimension's size
     * @param blocks how many blocks
     * @param block which block
     * @return the block's start and stop
     * @throws IllegalArgumentException if {@code size < 0}, {@code blocks < 1} or {@code block} is
     *     not in {@code [0, blocks)}
     */
    public static long[] blockRange(long size, int blocks, int block) {
        if (size < 0 || blocks < 1 || block < 0 || block >= blocks) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "blockRange needs size >= 0 and block in [0, blocks), got size %d, block %d of %d", size, block,
                    blocks));
        }
        long base = size / blocks;
        long extra = size % blocks;
        long start = block * base + Math.min(block, extra);
        return new long[] {start, start + base + (block < extra ? 1 : 0)};
    }

    /**
     * Parses numpy's syntax: comma-separated indexes, each {@code start:stop:step} (parts optional),
     * an integer, or {@code ...}; surrounding brackets and spaces are ignored; {@code ""}, {@code "[]"}
     * and {@code ":"} are the whole tensor.
     *
     * @param text e.g. {@code ":, 0:128"} or {@code "[3, ..., ::2]"}
     * @return the slice
     * @throws IllegalArgumentException naming the index that is not valid
     */
    public static Slice parse(String text) {
        Objects.requireNonNull(text, "text");
        String s = text.strip();
        if (s.startsWith("[") && s.endsWith("]")) {
            s = s.substring(1, s.length() - 1).strip();
        }
        if (s.isEmpty()) {
            return WHOLE;
        }
        List<Index> list = new ArrayList<>();
        for (String part : s.split(",", -1)) {
            String p = part.strip();
            if (p.equals("...")) {
                list.add(ELLIPSIS);
                continue;
            }
            String[] f = p.split(":", -1);
            try {
                if (f.length == 1) {
                    if (p.isEmpty()) {
                        throw new IllegalArgumentException("an empty index");
                    }
                    list.add(new At(Long.parseLong(p)));
                } else if (f.length <= 3) {
                    Long start = f[0].isBlank() ? null : Long.parseLong(f[0].strip());
                    Long stop = f[1].isBlank() ? null : Long.parseLong(f[1].strip());
                    long step = f.length == 3 && !f[2].isBlank() ? Long.parseLong(f[2].strip()) : 1;
                    list.add(new Range(start, stop, step));
                } else {
                    throw new IllegalArgumentException("more than two ':'");
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(String.format(Locale.ROOT,
                        "not a slice: \"%s\": index \"%s\" is not start:stop:step, an integer or '...' (%s)", text,
                        p, e.getMessage()), e);
            }
        }
        return new Slice(list);
    }

    /** {@return the indexes as given (an {@link #ELLIPSIS} not yet expanded)} */
    public List<Index> indexes() {
        return indexes;
    }

    /** {@return whether this slice takes every element of any tensor ({@code []}, {@code [:]}, {@code [...]}, ...)} */
    public boolean isWhole() {
        for (Index i : indexes) {
            if (!(i instanceof Ellipsis) && !(i instanceof Range r && r.start() == null && r.stop() == null
                    && r.step() == 1)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Slice s && s.indexes.equals(indexes);
    }

    @Override
    public int hashCode() {
        return indexes.hashCode();
    }

    /** {@return numpy's syntax, e.g. {@code [:, 0:128, ::2]}; {@link #parse} reads it back} */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < indexes.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append(indexes.get(i));
        }
        return sb.append(']').toString();
    }
}
