package io.github.semyonsinchenko.safetensors.kernels;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I32;
import static io.github.semyonsinchenko.safetensors.format.LittleEndian.I64;

import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.lang.foreign.MemorySegment;

/** What the two Java paths share: gathers are row copies, gather-and-convert converts row by row. */
abstract class JavaBackend extends Backend {

    @Override
    final void afterCall() {
        MappedFiles.raisePendingFault();
    }

    /**
     * Index {@code i}, read once and checked against {@code nRows}: {@link Kernels} checked them all
     * before, but another thread may have written them since. The caller uses this value only.
     */
    static long index(MemorySegment indices, IndexType type, long i, long nRows) {
        long r = type == IndexType.U32
                ? Integer.toUnsignedLong(indices.get(I32, i * 4))
                : indices.get(I64, i * 8);
        if (r < 0 || r >= nRows) {
            throw Arguments.indexChanged(i, r, nRows);
        }
        return r;
    }

    @Override
    final void gather(MemorySegment table, long nRows, long rowBytes, MemorySegment indices, IndexType type,
            long nIdx, MemorySegment dst) {
        for (long i = 0; i < nIdx; i++) {
            MemorySegment.copy(table, index(indices, type, i, nRows) * rowBytes, dst, i * rowBytes, rowBytes);
        }
    }

    @Override
    final void gatherConvert(Conversion c, MemorySegment table, long nRows, long rowElems, MemorySegment indices,
            IndexType type, long nIdx, MemorySegment dst) {
        long srcRow = rowElems * 2;
        long dstRow = rowElems * 4;
        for (long i = 0; i < nIdx; i++) {
            long r = index(indices, type, i, nRows);
            convert(c, table.asSlice(r * srcRow, srcRow), dst.asSlice(i * dstRow, dstRow), rowElems);
        }
    }
}
