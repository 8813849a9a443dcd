package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.NameGlob;
import io.github.semyonsinchenko.safetensors.io.Slice;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * Which block of each tensor one rank of a tensor-parallel group loads: every rank reads only its
 * block of each split weight, and the blocks of all ranks cover each weight exactly once.
 *
 * <h2>The rule</h2>
 * Real tensor-parallel loaders decide per layer type: Megatron-LM and vLLM split a
 * <em>column-parallel</em> linear layer's weight (stored {@code [out, in]}: q/k/v, gate/up
 * projections, embeddings, the LM head) along dimension 0, the output features, and its bias with
 * it; a <em>row-parallel</em> layer's weight (the attention output and MLP down projections) along
 * dimension 1, the input features, keeping its bias whole; norms stay whole on every rank. They
 * know each tensor's layer type from the model's code. This helper knows only names and shapes, so:
 * <ol>
 *   <li>a tensor matching a {@link #replicate} glob is loaded whole;</li>
 *   <li>a tensor of rank 2 or more is split along {@link #dim} (0 by default: column parallel), or
 *       along dimension 1 when it matches a {@link #rowParallel} glob;</li>
 *   <li>a 1-D tensor (norm weights, biases) is loaded whole, unless it matches a
 *       {@link #splitVectors} glob (column-parallel biases), then split along dimension 0;</li>
 *   <li>a scalar, or a tensor whose split dimension is smaller than the world size, is loaded
 *       whole.</li>
 * </ol>
 * Blocks are cut as {@code numpy.array_split} cuts (the first {@code size % worldSize} ranks get one
 * row more) where Megatron and vLLM require the size to divide evenly; the loaded tensor's
 * {@link LoadedTensor#slice()} says which block a rank got.
 *
 * <p>Splitting along dimension 0 keeps each rank's block one contiguous run of the file, read in
 * one request. Along dimension 1 each row contributes a run; the runs are merged into requests
 * across gaps up to {@link LoaderConfig#gapBytes()}, so a row-parallel block costs either more
 * requests or more bytes read.
 *
 * <pre>{@code
 * TensorParallel tp = TensorParallel.of(worldSize, rank)
 *         .rowParallel("*.o_proj.weight", "*.down_proj.weight");
 * SafetensorsLoader.open(config, tp.selection(), "s3a://bucket/llama/")
 * }</pre>
 */
public final class TensorParallel {
    private final int worldSize;
    private final int rank;
    private final int dim;
    private final List<String> rowParallel;
    private final List<String> replicate;
    private final List<String> vectors;
    private final Predicate<String> isRowParallel;
    private final Predicate<String> isReplicated;
    private final Predicate<String> isSplitVector;

    private TensorParallel(int worldSize, int rank, int dim, List<String> rowParallel, List<String> replicate,
                           List<String> vectors) {
        this.worldSize = worldSize;
        this.rank = rank;
        this.dim = dim;
        this.rowParallel = List.copyOf(rowParallel);
        this.replicate = List.copyOf(replicate);
        this.vectors = List.copyOf(vectors);
        this.isRowParallel = NameGlob.anyOf(this.rowParallel);
        this.isReplicated = NameGlob.anyOf(this.replicate);
        this.isSplitVector = NameGlob.anyOf(this.vectors);
    }

    /**
     * Rank {@code rank} of {@code worldSize}: tensors of rank 2 and more split along dimension 0,
     * the rest whole.
     *
     * @param worldSize the group's size
     * @param rank this rank
     * @return the rule
     * @throws IllegalArgumentException if {@code worldSize < 1} or {@code rank} is not in {@code [0, worldSize)}
     */
    public static TensorParallel of(int worldSize, int rank) {
        ChunkPlan.checkRank(rank, worldSize);
        return new TensorParallel(worldSize, rank, 0, List.of(), List.of(), List.of());
    }

    /**
     * The dimension tensors of rank 2 and more are split along (0: column parallel; 1: row parallel).
     *
     * @param dim the dimension
     * @return the new rule
     */
    public TensorParallel dim(int dim) {
        if (dim < 0) {
            throw new IllegalArgumentException("dim must be >= 0, got " + dim);
        }
        return new TensorParallel(worldSize, rank, dim, rowParallel, replicate, vectors);
    }

    /**
     * Tensors matching these globs are split along dimension 1 (row-parallel layers).
     *
     * @param globs names of row-parallel weights (fnmatch)
     * @return the new rule
     */
    public TensorParallel rowParallel(String... globs) {
        return new TensorParallel(worldSize, rank, dim, List.of(globs), replicate, vectors);
    }

    /**
     * Tensors matching these globs are loaded whole on every rank.
     *
     * @param globs names of tensors every rank loads whole (fnmatch)
     * @return the new rule
     */
    public TensorParallel replicate(String... globs) {
        return new TensorParallel(worldSize, rank, dim, rowParallel, List.of(globs), vectors);
    }

    /**
     * 1-D tensors matching these globs (e.g. {@code "*"} or column-parallel biases) are split along dimension 0.
     *
     * @param globs names of 1-D tensors to split (fnmatch)
     * @return the new rule
     */
    public TensorParallel splitVectors(String... globs) {
        return new TensorParallel(worldSize, rank, dim, rowParallel, replicate, List.of(globs));
    }

    /** {@return the number of ranks} */
    public int worldSize() {
        return worldSize;
    }

    /** {@return this rank} */
    public int rank() {
        return rank;
    }

    /**
     * The dimension {@code info} is split along for this rule, or -1 when it is loaded whole (see
     * the class comment).
     *
     * @param info a tensor's header entry
     * @return the dimension, or -1
     */
    public int splitDim(TensorInfo info) {
        String name = info.name();
        if (isReplicated.test(name)) {
            return -1;
        }
        int d;
        if (info.rank() >= 2) {
            d = isRowParallel.test(name) ? 1 : dim;
        } else if (info.rank() == 1 && isSplitVector.test(name)) {
            d = 0;
        } else {
            return -1;
        }
        if (d >= info.rank()) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "tensor \"%s\" has %d dimension(s); it"
                    + " cannot be split along dimension %d", name, info.rank(), d));
        }
        return info.dim(d) < worldSize ? -1 : d;
    }

    /**
     * This rank's slice of {@code info}: its block along {@link #splitDim}, or {@link Slice#whole()}.
     *
     * @param info a tensor's header entry
     * @return this rank's slice of it
     */
    public Slice sliceOf(TensorInfo info) {
        int d = splitDim(info);
        if (d < 0) {
            return Slice.whole();
        }
        long[] block = Slice.blockRange(info.dim(d), worldSize, rank);
        return Slice.along(d, block[0], block[1]);
    }

    /** {@return every tensor, each with this rank's slice} */
    public TensorSelection selection() {
        return TensorSelection.all().slices(this::sliceOf);
    }

    /**
     * {@code base}'s tensors, each with this rank's slice (a slice {@code base} gives by name wins).
     *
     * @param base the tensors to load
     * @return the selection
     */
    public TensorSelection selection(TensorSelection base) {
        return base.slices(this::sliceOf);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "tensor parallel rank %d of %d (dim %d, row-parallel %s, replicated %s, split"
                + " vectors %s)", rank, worldSize, dim, rowParallel, replicate, vectors);
    }
}
