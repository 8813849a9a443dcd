package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The demo's step 4: read throughput through the mapping (every tensor copied into an off-heap
 * buffer) next to its baseline measured in the same run (the same copies between two off-heap
 * buffers), best of the repetitions, alternating which copy goes first.
 */
final class DemoThroughputStep {
    private DemoThroughputStep() {}

    /** Measures {@code file} in {@code reps} rounds and prints each round and the best. */
    static void run(PrintWriter out, Path file, int reps) throws IOException {
        Format.line(out, "");
        try (SafetensorsFile f = SafetensorsFile.open(file, MappedFile.Sharing.CONFINED);
             Arena arena = Arena.ofConfined()) {
            long total = f.header().dataSize();
            Format.line(out, "[4/4] read throughput: MemorySegment.copy of all " + f.size() + " tensors ("
                    + Format.size(total) + ") from a fresh mapping into an off-heap buffer, vs the same copies"
                    + " off-heap -> off-heap; best of " + reps);
            if (total == 0) {
                Format.line(out, "  nothing to copy");
                return;
            }
            List<TensorInfo> infos = f.header().tensors();
            List<MemorySegment> slices = new ArrayList<>(infos.size());
            for (Tensor t : f) {
                slices.add(t.data());
            }
            // Arena.allocate zeroes the memory, so both buffers are resident before timing.
            MemorySegment dst = arena.allocate(total, 4096);
            MemorySegment src = arena.allocate(total, 4096);
            double bestRead = 0;
            double bestBase = 0;
            Format.line(out, "  rep   mmap -> off-heap   off-heap -> off-heap");
            // The first read also fills the baseline's source with the same bytes.
            long firstRead = readAll(slices, infos, dst);
            src.copyFrom(dst);
            for (int r = 1; r <= reps; r++) {
                // Alternate which copy goes first, so neither always runs right after the other.
                long readNs;
                long baseNs;
                if (r % 2 == 1) {
                    readNs = r == 1 ? firstRead : readAll(slices, infos, dst);
                    baseNs = copyAll(src, infos, dst);
                } else {
                    baseNs = copyAll(src, infos, dst);
                    readNs = readAll(slices, infos, dst);
                }
                double read = total / (readNs / 1e9) / 1e9;
                double base = total / (baseNs / 1e9) / 1e9;
                bestRead = Math.max(bestRead, read);
                bestBase = Math.max(bestBase, base);
                Format.line(out, Format.fmt("  %3d   %9.2f GB/s     %9.2f GB/s%s", r, read, base,
                        r == 1 ? "   (first read maps the pages: minor faults)" : ""));
            }
            // Whichever copy ran last, dst must hold the file's bytes.
            for (int i = 0; i < slices.size(); i++) {
                MemorySegment s = slices.get(i);
                long begin = infos.get(i).begin();
                if (MemorySegment.mismatch(s, 0, s.byteSize(), dst, begin, begin + s.byteSize()) >= 0) {
                    throw new IllegalStateException("the copy of tensor \"" + infos.get(i).name()
                            + "\" differs from the file");
                }
            }
            Format.line(out, Format.fmt("  read     %.2f GB/s  (mmap -> off-heap, best of %d; GB = 10^9 bytes)",
                    bestRead, reps));
            Format.line(out, Format.fmt("  baseline %.2f GB/s  (off-heap -> off-heap MemorySegment.copy, same run,"
                    + " same sizes)", bestBase));
            Format.line(out, Format.fmt("  ratio    %.2f  (read / baseline; 1.00 means reading the file costs a"
                    + " memcpy)", bestRead / bestBase));
        }
    }

    /** Copies every tensor out of the mapping into dst at its offset; returns the nanoseconds taken. */
    private static long readAll(List<MemorySegment> slices, List<TensorInfo> infos, MemorySegment dst) {
        long t0 = System.nanoTime();
        for (int i = 0; i < slices.size(); i++) {
            MemorySegment s = slices.get(i);
            MemorySegment.copy(s, 0, dst, infos.get(i).begin(), s.byteSize());
        }
        return System.nanoTime() - t0;
    }

    /** The baseline: the same copies, from an off-heap buffer instead of the mapping. */
    private static long copyAll(MemorySegment src, List<TensorInfo> infos, MemorySegment dst) {
        long t0 = System.nanoTime();
        for (TensorInfo info : infos) {
            MemorySegment.copy(src, info.begin(), dst, info.begin(), info.byteSize());
        }
        return System.nanoTime() - t0;
    }
}
