package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.SliceLayout;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * The deterministic chunk plan of a checkpoint: any process computes the same plan from the same
 * files and selection without talking to the others, so ownership needs no coordination.
 *
 * <p>Files are taken in path order and, within a file, the selected tensors in storage (offset)
 * order. Each tensor needs the byte runs of its slice (all its bytes when whole), merged across
 * gaps of at most {@code gapBytes} ({@link SliceLayout#mergedRanges}). Tensors are packed into
 * chunks greedily: a tensor joins the current chunk while the bytes the chunk reads (its ranges
 * merged across small gaps) stay within {@code chunkLimit}; a tensor is never split, so one larger
 * than the limit gets a chunk of its own. A chunk's ranges are coalesced with {@link ReadCoalescing}
 * (the same gap threshold) and read in requests of at most {@code rangeLimit} bytes (one Hadoop
 * {@code FileRange} holds at most {@code Integer.MAX_VALUE}). Chunk {@code i} belongs to rank
 * {@code i % worldSize}.
 *
 * @param chunks the chunks in plan order
 * @param chunkLimit the largest chunk holding more than one tensor, in bytes read
 * @param rangeLimit the largest single request
 * @param gapBytes the largest gap of unneeded bytes a request spans between needed ones
 */
public record ChunkPlan(List<Chunk> chunks, long chunkLimit, int rangeLimit, long gapBytes) {
    /** Copies the list. */
    public ChunkPlan {
        chunks = List.copyOf(chunks);
    }

    /**
     * Packs every tensor of {@code files}, whole, into chunks.
     *
     * @param chunkLimit the largest chunk that holds more than one tensor, in bytes (&gt; 0)
     * @param rangeLimit the largest single request, in bytes (&gt; 0)
     * @param onePerTensor every tensor its own chunk (the legacy per-tensor path)
     * @param files the checkpoint's files with their headers, any order
     * @return the plan
     */
    public static ChunkPlan of(List<CheckpointFile> files, long chunkLimit, int rangeLimit, boolean onePerTensor) {
        return of(files, TensorSelection.all(), chunkLimit, rangeLimit, 0, onePerTensor);
    }

    /**
     * Packs the tensors {@code selection} selects, each its slice, into chunks that read only the
     * bytes the slices need (and gaps of at most {@code gapBytes} between them).
     *
     * @param chunkLimit the largest chunk that holds more than one tensor, in bytes read (&gt; 0)
     * @param rangeLimit the largest single request, in bytes (&gt; 0)
     * @param gapBytes the largest run of unneeded bytes one request may span (&ge; 0)
     * @param onePerTensor every tensor its own chunk (the legacy per-tensor path)
     * @param files the checkpoint's files with their headers, any order
     * @param selection the tensors and their slices
     * @return the plan
     * @throws java.util.NoSuchElementException if a tensor the selection names is in no file
     * @throws io.github.semyonsinchenko.safetensors.io.SliceOutOfBoundsException if a slice does not fit its tensor
     * @throws IllegalArgumentException for a slice with too many indexes, or a tensor sliced but not selected
     */
    public static ChunkPlan of(List<CheckpointFile> files, TensorSelection selection, long chunkLimit,
                               int rangeLimit, long gapBytes, boolean onePerTensor) {
        if (chunkLimit <= 0) {
            throw new IllegalArgumentException("chunkLimit must be positive, got " + chunkLimit);
        }
        if (rangeLimit <= 0) {
            throw new IllegalArgumentException("rangeLimit must be positive, got " + rangeLimit);
        }
        if (gapBytes < 0) {
            throw new IllegalArgumentException("gapBytes must be >= 0, got " + gapBytes);
        }
        List<CheckpointFile> ordered = new ArrayList<>(files);
        ordered.sort(Comparator.comparing(CheckpointFile::path));
        checkNamed(ordered, selection);
        List<Chunk> chunks = new ArrayList<>();
        for (CheckpointFile file : ordered) {
            Packer packer = new Packer(file, chunks, rangeLimit, gapBytes);
            for (TensorInfo t : file.header().tensors()) {
                if (!selection.selects(t.name())) {
                    continue;
                }
                Wanted w = Wanted.of(file, t, SliceLayout.of(t, selection.sliceOf(t)), gapBytes);
                if (onePerTensor || !packer.isEmpty() && packer.cost + packer.increment(w) > chunkLimit) {
                    packer.flush();
                }
                packer.add(w);
            }
            packer.flush();
        }
        return new ChunkPlan(chunks, chunkLimit, rangeLimit, gapBytes);
    }

    /** Every tensor named by the selection exists; every tensor given a slice is selected. */
    private static void checkNamed(List<CheckpointFile> files, TensorSelection selection) {
        Set<String> required = selection.required();
        if (required.isEmpty()) {
            return;
        }
        Set<String> present = new HashSet<>();
        for (CheckpointFile f : files) {
            for (TensorInfo t : f.header().tensors()) {
                present.add(t.name());
            }
        }
        List<String> missing = new ArrayList<>();
        for (String name : required) {
            if (!present.contains(name)) {
                missing.add(name);
            } else if (!selection.selects(name)) {
                throw new IllegalArgumentException("tensor \"" + name + "\" is given a slice but not selected by "
                        + selection);
            }
        }
        if (!missing.isEmpty()) {
            List<String> paths = files.stream().map(CheckpointFile::path).toList();
            throw new NoSuchElementException(String.format(Locale.ROOT, "no tensor %s in the checkpoint (%d file(s):"
                    + " %s)", missing, files.size(), paths.size() > 3 ? paths.subList(0, 3) + "..." : paths));
        }
    }

    /** One selected tensor: its layout and the absolute byte ranges it needs, in order. */
    private record Wanted(TensorInfo info, SliceLayout layout, long fileOffset, List<SliceLayout.MergedRange> merged) {
        static Wanted of(CheckpointFile file, TensorInfo info, SliceLayout layout, long gapBytes) {
            return new Wanted(info, layout, file.header().dataOffset() + info.begin(), layout.mergedRanges(gapBytes));
        }
    }

    /** Where file offset {@code at} lands in a buffer of {@code reads} packed in order; 0 if no read passes it. */
    private static long bufferAt(List<ReadCoalescing.Read> reads, long at) {
        long buffer = 0;
        for (ReadCoalescing.Read read : reads) {
            if (at >= read.offset() && at <= read.end()) {
                return buffer + at - read.offset();
            }
            buffer += read.length();
        }
        return 0;
    }

    /** Builds a file's chunks: the tensors of the current chunk and the bytes it reads so far. */
    private static final class Packer {
        private final CheckpointFile file;
        private final List<Chunk> chunks;
        private final int rangeLimit;
        private final long gapBytes;
        private final List<Wanted> members = new ArrayList<>();
        long cost;
        private long lastEnd = -1;

        Packer(CheckpointFile file, List<Chunk> chunks, int rangeLimit, long gapBytes) {
            this.file = file;
            this.chunks = chunks;
            this.rangeLimit = rangeLimit;
            this.gapBytes = gapBytes;
        }

        boolean isEmpty() {
            return members.isEmpty();
        }

        /** The bytes {@code w} adds to the chunk: its ranges, and the gaps small enough to read across. */
        long increment(Wanted w) {
            long inc = 0;
            long end = lastEnd;
            for (SliceLayout.MergedRange m : w.merged()) {
                long offset = w.fileOffset() + m.offset();
                long gap = offset - end;
                inc += m.length() + (end >= 0 && gap <= gapBytes ? gap : 0);
                end = offset + m.length();
            }
            return inc;
        }

        void add(Wanted w) {
            cost += increment(w);
            members.add(w);
            if (!w.merged().isEmpty()) {
                lastEnd = w.fileOffset() + w.merged().getLast().end();
            }
        }

        /** Ends the current chunk: coalesces its ranges into reads, splits them into requests, places the parts. */
        void flush() {
            if (members.isEmpty()) {
                return;
            }
            List<ReadCoalescing.Range> ranges = new ArrayList<>();
            for (Wanted w : members) {
                for (SliceLayout.MergedRange m : w.merged()) {
                    ranges.add(new ReadCoalescing.Range(w.fileOffset() + m.offset(), m.length()));
                }
            }
            List<ReadCoalescing.Read> reads = ReadCoalescing.coalesce(ranges, gapBytes, Long.MAX_VALUE);
            long[] rangeBuffer = new long[ranges.size()];
            List<Chunk.Range> requests = new ArrayList<>();
            long buffer = 0;
            for (ReadCoalescing.Read read : reads) {
                for (int i : read.members()) {
                    rangeBuffer[i] = buffer + ranges.get(i).offset() - read.offset();
                }
                for (long at = read.offset(); at < read.end(); ) {
                    int len = (int) Math.min(rangeLimit, read.end() - at);
                    requests.add(new Chunk.Range(at, len, buffer + at - read.offset()));
                    at += len;
                }
                buffer += read.length();
            }
            List<PlannedTensor> planned = new ArrayList<>(members.size());
            int r = 0;
            for (Wanted w : members) {
                List<PlannedTensor.Part> parts = new ArrayList<>(w.merged().size());
                for (SliceLayout.MergedRange m : w.merged()) {
                    parts.add(new PlannedTensor.Part(m.firstRun(), m.runs(), m.offset(), m.length(), rangeBuffer[r++]));
                }
                if (w.info().byteSize() == 0) {
                    // An empty tensor has a place in the buffer, where a read passes its offset, but no bytes.
                    parts.add(new PlannedTensor.Part(0, 0, 0, 0, bufferAt(reads, w.fileOffset())));
                }
                planned.add(new PlannedTensor(w.info(), w.layout(), w.fileOffset(), parts));
            }
            long start = reads.isEmpty() ? members.getFirst().fileOffset() : reads.getFirst().offset();
            long end = reads.isEmpty() ? start : reads.getLast().end();
            chunks.add(new Chunk(chunks.size(), file.path(), start, end, planned, requests));
            members.clear();
            cost = 0;
            lastEnd = -1;
        }
    }

    /**
     * The rank that owns chunk {@code chunkIndex}: {@code chunkIndex % worldSize}.
     *
     * @param chunkIndex the chunk's position in the plan
     * @param worldSize the number of ranks
     * @return its owner
     */
    public static int owner(int chunkIndex, int worldSize) {
        checkRank(0, worldSize);
        return Math.floorMod(chunkIndex, worldSize);
    }

    /**
     * The chunks {@code rank} owns, in plan order.
     *
     * @param rank a rank, in {@code [0, worldSize)}
     * @param worldSize the number of ranks
     * @return its chunks
     */
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

    /** {@return the bytes all chunks read} */
    public long totalBytes() {
        long sum = 0;
        for (Chunk c : chunks) {
            sum += c.byteSize();
        }
        return sum;
    }

    /** {@return the number of tensors in the plan} */
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
