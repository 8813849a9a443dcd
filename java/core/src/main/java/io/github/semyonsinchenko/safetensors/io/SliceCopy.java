package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.IndexType;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * The one-pass copy of a {@link SliceLayout}'s runs, converted on the way. A call per run costs
 * some tens of nanoseconds for a copy and several times that for a conversion (argument checks, the
 * kernel call), so each is used only where runs are long enough to hide it:
 * <ul>
 *   <li>runs of {@value #COPY_RUN_BYTES} bytes and more are copied one {@link MemorySegment#copy}
 *       per run; shorter ones through the kernels' gather: the runs become rows of a table (rows of
 *       the largest size dividing every run and stride), their indices are written a block at a
 *       time and one gather call copies a block;</li>
 *   <li>a conversion runs one kernel call per run from {@value #CONVERT_RUN_BYTES} bytes on;
 *       below, runs are collected (copied or gathered) into a small buffer and converted a buffer at
 *       a time, except F16/BF16 to F32 of short runs, which the gather-and-convert kernel does in
 *       one step.</li>
 * </ul>
 * The buffer is a few tens of KiB, so the conversion reads it from the cache: no copy of the slice
 * is ever made in the source dtype.
 */
final class SliceCopy {
    /** Runs at least this long are copied one call per run; shorter ones are gathered. */
    static final long COPY_RUN_BYTES = 256;
    /** Runs at least this long are converted one kernel call per run; shorter ones a buffer at a time. */
    static final long CONVERT_RUN_BYTES = 64 << 10;
    /** Gathered rows per call: the index block stays in the L1 cache. */
    private static final int BLOCK_ROWS = 2048;
    /** Bytes collected before a conversion call. */
    private static final int STAGE_BYTES = 64 << 10;

    private SliceCopy() {
    }

    static void copy(SliceLayout layout, MemorySegment src, long srcStart, long fromRun, long toRun,
                     MemorySegment dst, long dstOffset, Dtype target) {
        Dtype dtype = layout.dtype();
        if (!Kernels.canConvert(dtype, target)) {
            throw new UnsupportedOperationException(String.format(Locale.ROOT, "tensor \"%s\": no kernel converts %s"
                    + " to %s (see Kernels.canConvert)", layout.tensor(), dtype, target));
        }
        long runBytes = layout.runBytes();
        long runElements = (runBytes * 8) / dtype.bits();
        long outRun = dtype == target ? runBytes : runElements * target.byteSize();
        long outBytes = Math.multiplyExact(toRun - fromRun, outRun);
        if (dstOffset < 0 || dstOffset > dst.byteSize() - outBytes) {
            throw new IndexOutOfBoundsException(String.format(Locale.ROOT, "tensor \"%s\": the slice's %d bytes"
                    + " from dstOffset %d do not fit in dst of %d bytes", layout.tensor(), outBytes, dstOffset,
                    dst.byteSize()));
        }
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("dst is read-only");
        }
        Runs runs = new Runs(layout, src, srcStart, fromRun, toRun);
        if (dtype == target) {
            runs.copyAll(dst, dstOffset);
        } else if (runBytes >= CONVERT_RUN_BYTES) {
            for (long r = fromRun; r < toRun; r++, dstOffset += outRun) {
                Kernels.convert(dtype, target, src.asSlice(runs.next(), runBytes), dst.asSlice(dstOffset, outRun),
                        runElements);
            }
        } else {
            Conversion fused = Conversion.of(dtype, target)
                    .filter(c -> c == Conversion.BF16_TO_F32 || c == Conversion.F16_TO_F32).orElse(null);
            if (fused != null && runBytes < COPY_RUN_BYTES && runs.gatherable()) {
                runs.gatherConvert(fused, dst, dstOffset);
            } else {
                runs.staged(dtype, target, dst, dstOffset, runElements, outRun);
            }
        }
    }

    /**
     * The largest row size dividing every run and stride, so that every run is whole rows of one
     * table; a multiple of the element size when converting. 0 when there is no such row
     * (sub-byte elements never convert, so any byte row works for them).
     */
    private static long rowBytes(long runBytes, long[] strides, Dtype dtype) {
        long g = runBytes;
        for (long s : strides) {
            g = gcd(g, s);
        }
        if (dtype.isByteAligned() && g % dtype.byteSize() != 0) {
            return 0; // cannot happen for whole elements: runs and strides are whole elements
        }
        return g;
    }

    private static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    /** The runs {@code [from, to)} in order, read from {@code src} (byte 0 is tensor byte {@code srcStart}). */
    private static final class Runs {
        private final MemorySegment src;
        private final long srcStart;
        private final long count;
        private final long runBytes;
        private final long row;
        private final long[] counts;
        private final long[] strides;
        private final long[] digits;
        private long offset;

        Runs(SliceLayout layout, MemorySegment src, long srcStart, long from, long to) {
            this.src = src;
            this.srcStart = srcStart;
            this.count = to - from;
            this.runBytes = layout.runBytes();
            this.counts = layout.loopCounts();
            this.strides = layout.loopStrides();
            this.row = rowBytes(runBytes, strides, layout.dtype());
            this.digits = new long[counts.length];
            this.offset = layout.runOffset(from);
            long run = from;
            for (int k = 0; k < counts.length; k++) {
                digits[k] = run % counts[k];
                run /= counts[k];
            }
        }

        boolean gatherable() {
            return row > 0 && count > 1;
        }

        /** The next run's offset in {@code src}; the mixed-radix counter of the layout's loops. */
        long next() {
            long at = offset - srcStart;
            for (int k = 0; k < counts.length; k++) {
                offset += strides[k];
                if (++digits[k] < counts[k]) {
                    return at;
                }
                offset -= counts[k] * strides[k];
                digits[k] = 0;
            }
            return at;
        }

        /** Every remaining run into {@code dst} from {@code out}. */
        void copyAll(MemorySegment dst, long out) {
            if (runBytes < COPY_RUN_BYTES && gatherable()) {
                gather(dst, out, count);
            } else {
                copyEach(dst, out, count);
            }
        }

        /** The next {@code n} runs, one copy each. */
        private void copyEach(MemorySegment dst, long out, long n) {
            try {
                for (long i = 0; i < n; i++, out += runBytes) {
                    MemorySegment.copy(src, next(), dst, out, runBytes);
                }
                MappedFiles.raisePendingFault();
            } catch (InternalError e) {
                if (MappedFiles.isMemoryFault(e)) {
                    throw MappedFiles.faultDuring("SliceLayout.copy", e, "src", src, "dst", dst);
                }
                throw e;
            }
        }

        /** The next {@code n} runs by gather calls of whole runs, into {@code dst} from {@code out}. */
        private void gather(MemorySegment dst, long out, long n) {
            gatherBlocks(n, dst, out, row, (table, indices, to) -> Kernels.gather(table, row, indices, IndexType.I64, to));
        }

        /** F16/BF16 to F32 of every remaining run, fused into the gather. */
        void gatherConvert(Conversion c, MemorySegment dst, long out) {
            long rowElements = row / 2;
            gatherBlocks(count, dst, out, row * 2,
                    (table, indices, to) -> Kernels.gatherConvert(c, table, rowElements, indices, IndexType.I64, to));
        }

        /** One gather call: rows of {@code table} at {@code indices} into {@code to}, sized exactly. */
        private interface Gather {
            void run(MemorySegment table, MemorySegment indices, MemorySegment to);
        }

        /**
         * Writes the indices of the next {@code n} runs a block at a time and gathers each block into
         * {@code dst}, from {@code out}, {@code outRow} bytes a row.
         */
        private void gatherBlocks(long n, MemorySegment dst, long out, long outRow, Gather gather) {
            long rowsPerRun = runBytes / row;
            long tableStart = (offset - srcStart) % row;
            MemorySegment table = src.asSlice(tableStart, (src.byteSize() - tableStart) / row * row);
            long runsPerBlock = Math.max(1, BLOCK_ROWS / rowsPerRun);
            MemorySegment indices = MemorySegment.ofArray(new long[(int) (Math.min(runsPerBlock, n) * rowsPerRun)]);
            for (long done = 0; done < n; ) {
                long m = Math.min(runsPerBlock, n - done);
                long k = 0;
                for (long i = 0; i < m; i++) {
                    long base = (next() - tableStart) / row;
                    for (long j = 0; j < rowsPerRun; j++) {
                        indices.setAtIndex(LittleEndian.I64, k++, base + j);
                    }
                }
                gather.run(table, indices.asSlice(0, k * 8), dst.asSlice(out, k * outRow));
                out += k * outRow;
                done += m;
            }
        }

        /** Every remaining run converted, collected into a small buffer a buffer at a time. */
        void staged(Dtype dtype, Dtype target, MemorySegment dst, long out, long runElements, long outRun) {
            long runsPerStage = Math.max(1, STAGE_BYTES / runBytes);
            MemorySegment stage = MemorySegment.ofArray(new long[(int) ((Math.min(runsPerStage, count) * runBytes
                    + 7) / 8)]);
            for (long done = 0; done < count; ) {
                long m = Math.min(runsPerStage, count - done);
                if (runBytes < COPY_RUN_BYTES && row > 0 && m > 1) {
                    gather(stage, 0, m);
                } else {
                    copyEach(stage, 0, m);
                }
                Kernels.convert(dtype, target, stage.asSlice(0, m * runBytes), dst.asSlice(out, m * outRun),
                        m * runElements);
                out += m * outRun;
                done += m;
            }
        }
    }
}
