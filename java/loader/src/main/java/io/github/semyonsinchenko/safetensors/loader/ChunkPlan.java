package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The deterministic chunk plan of a checkpoint: any process computes the same plan from the same
 * files without talking to the others, so ownership needs no coordination.
 *
 * <p>Files are taken in path order and, within a file, tensors in storage (offset) order. Tensors are
 * packed into contiguous chunks of at most {@code chunkLimit} bytes; a tensor is never split, so a
 * tensor larger than the limit gets a chunk of its own. A chunk is read in ranges of at most
 * {@code rangeLimit} bytes (one Hadoop {@code FileRange} holds at most {@code Integer.MAX_VALUE}).
 * Chunk {@code i} belongs to rank {@code i % worldSize}.
 */
public record ChunkPlan(List<Chunk> chunks, long chunkLimit, int rangeLimit) {
    public ChunkPlan {
        chunks = List.copyOf(chunks);
    }

    /**
     * Packs the tensors of {@code files} into chunks.
     *
     * @param chunkLimit the largest chunk that holds more than one tensor, in bytes (&gt; 0)
     * @param rangeLimit the largest single request, in bytes (&gt; 0)
     * @param onePerTensor every tensor its own chunk (the legacy per-tensor path)
     */
    public static ChunkPlan of(List<CheckpointFile> files, long chunkLimit, int rangeLimit, boolean onePerTensor) {
        if (chunkLimit <= 0) {
            throw new IllegalArgumentException("chunkLimit must be positive, got " + chunkLimit);
        }
        if (rangeLimit <= 0) {
            throw new IllegalArgumentException("rangeLimit must be positive, got " + rangeLimit);
        }
        List<CheckpointFile> ordered = new ArrayList<>(files);
        ordered.sort(Comparator.comparing(CheckpointFile::path));
        List<Chunk> chunks = new ArrayList<>();
        for (CheckpointFile file : ordered) {
            long base = file.header().dataOffset();
            List<TensorInfo> tensors = file.header().tensors();
            if (onePerTensor) { // the legacy path: one request per tensor, empty ones included
                for (TensorInfo t : tensors) {
                    chunks.add(chunk(chunks.size(), file.path(), base, List.of(t), rangeLimit));
                }
                continue;
            }
            // The tensors of a valid file tile its data section, so packing them is coalescing
            // their ranges with no gap allowed.
            List<ReadCoalescing.Range> ranges = new ArrayList<>(tensors.size());
            for (TensorInfo t : tensors) {
                ranges.add(new ReadCoalescing.Range(t.begin(), t.byteSize()));
            }
            for (ReadCoalescing.Read read : ReadCoalescing.coalesce(ranges, 0, chunkLimit)) {
                List<TensorInfo> members = new ArrayList<>(read.members().size());
                for (int i : read.members()) {
                    members.add(tensors.get(i));
                }
                chunks.add(chunk(chunks.size(), file.path(), base, members, rangeLimit));
            }
        }
        return new ChunkPlan(chunks, chunkLimit, rangeLimit);
    }

    private static Chunk chunk(int index, String path, long base, List<TensorInfo> tensors, int rangeLimit) {
        long start = base + tensors.getFirst().begin();
        long end = base + tensors.getLast().end();
        List<PlannedTensor> planned = new ArrayList<>(tensors.size());
        for (TensorInfo t : tensors) {
            planned.add(new PlannedTensor(t, base + t.begin(), base + t.begin() - start));
        }
        List<Chunk.Range> ranges = new ArrayList<>();
        for (long at = start; at < end; ) {
            int len = (int) Math.min(rangeLimit, end - at);
            ranges.add(new Chunk.Range(at, len));
            at += len;
        }
        return new Chunk(index, path, start, end, planned, ranges);
    }

    /** The rank that owns chunk {@code chunkIndex}: {@code chunkIndex % worldSize}. */
    public static int owner(int chunkIndex, int worldSize) {
        checkRank(0, worldSize);
        return Math.floorMod(chunkIndex, worldSize);
    }

    /** The chunks {@code rank} owns, in plan order. */
    public List<Chunk> owned(int rank, int worldSize) {
        checkRank(rank, worldSize);
        List<Chunk> mine = new ArrayList<>();
        for (Chunk c : chunks) {
            if (owner(c.index(), worldSize) == rank) {
                mine.add(c);
            }
        }
        return mine;
    }

    /** Total bytes of all chunks. */
    public long totalBytes() {
        long sum = 0;
        for (Chunk c : chunks) {
            sum += c.byteSize();
        }
        return sum;
    }

    /** Number of tensors in the plan. */
    public int tensorCount() {
        int n = 0;
        for (Chunk c : chunks) {
            n += c.tensors().size();
        }
        return n;
    }

    static void checkRank(int rank, int worldSize) {
        if (worldSize <= 0) {
            throw new IllegalArgumentException("worldSize must be positive, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank must be in [0, " + worldSize + "), got " + rank);
        }
    }
}
