package io.github.semyonsinchenko.safetensors.kernels;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Every check {@link Kernels} makes before a path runs: sizes, offsets, overlaps, writability and
 * gather indices. A failed check throws naming the argument; nothing has been written then.
 */
final class Arguments {

    private Arguments() {}

    /** A checked conversion: the exact bytes read and written; null when there is nothing to do. */
    record Convert(MemorySegment src, MemorySegment dst) {}

    static Convert convert(Conversion c, MemorySegment src, MemorySegment dst, long count) {
        Objects.requireNonNull(c, "conversion");
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        if (count < 0) {
            throw new IllegalArgumentException(c + ": count must not be negative, got " + count);
        }
        long srcBytes = bytes(count, c.sourceBytes(), c + ": count");
        long dstBytes = bytes(count, c.targetBytes(), c + ": count");
        requireSize(src, srcBytes, "src", c, count);
        requireSize(dst, dstBytes, "dst", c, count);
        requireWritable(dst, "dst");
        if (count == 0) {
            return null;
        }
        MemorySegment s = src.asSlice(0, srcBytes);
        MemorySegment d = dst.asSlice(0, dstBytes);
        requireDisjoint(s, "src", d);
        return new Convert(s, d);
    }

    /** A checked gather: the table's row count, the index count and the exact bytes written; null when empty. */
    record Gather(long nRows, long nIdx, MemorySegment dst) {}

    static Gather gather(MemorySegment table, long rowBytes, MemorySegment indices, IndexType indexType,
            MemorySegment dst) {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(indices, "indices");
        Objects.requireNonNull(indexType, "indexType");
        Objects.requireNonNull(dst, "dst");
        if (rowBytes <= 0) {
            throw new IllegalArgumentException("gather: rowBytes must be positive, got " + rowBytes);
        }
        if (table.byteSize() % rowBytes != 0) {
            throw new IllegalArgumentException("gather: table is " + table.byteSize()
                    + " bytes, not a whole number of rows of rowBytes=" + rowBytes);
        }
        long nRows = table.byteSize() / rowBytes;
        long nIdx = elements(indices.byteSize(), indexType.bytes(), "indices", indexType.name());
        long dstBytes = bytes(nIdx, rowBytes, "gather: rowBytes * index count");
        if (dst.byteSize() < dstBytes) {
            throw new IndexOutOfBoundsException("gather: dst is " + dst.byteSize() + " bytes; " + nIdx
                    + " rows of rowBytes=" + rowBytes + " need " + dstBytes);
        }
        return gatherRest(table, indices, indexType, dst, nRows, nIdx, dstBytes);
    }

    static Gather gatherConvert(Conversion c, MemorySegment table, long rowElems, MemorySegment indices,
            IndexType indexType, MemorySegment dst) {
        Objects.requireNonNull(c, "conversion");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(indices, "indices");
        Objects.requireNonNull(indexType, "indexType");
        Objects.requireNonNull(dst, "dst");
        if (c != Conversion.F16_TO_F32 && c != Conversion.BF16_TO_F32) {
            throw new IllegalArgumentException("gatherConvert: " + c + " has no gather kernel; use F16_TO_F32 or"
                    + " BF16_TO_F32");
        }
        if (rowElems <= 0) {
            throw new IllegalArgumentException("gatherConvert: rowElems must be positive, got " + rowElems);
        }
        long srcRow = bytes(rowElems, 2, "gatherConvert: rowElems");
        long dstRow = bytes(rowElems, 4, "gatherConvert: rowElems");
        if (table.byteSize() % srcRow != 0) {
            throw new IllegalArgumentException("gatherConvert: table is " + table.byteSize() + " bytes, not a whole"
                    + " number of rows of rowElems=" + rowElems + " " + c.source() + " values (" + srcRow + " bytes)");
        }
        long nRows = table.byteSize() / srcRow;
        long nIdx = elements(indices.byteSize(), indexType.bytes(), "indices", indexType.name());
        long dstBytes = bytes(nIdx, dstRow, "gatherConvert: rowElems * index count");
        if (dst.byteSize() < dstBytes) {
            throw new IndexOutOfBoundsException("gatherConvert: dst is " + dst.byteSize() + " bytes; " + nIdx
                    + " rows of rowElems=" + rowElems + " floats need " + dstBytes);
        }
        return gatherRest(table, indices, indexType, dst, nRows, nIdx, dstBytes);
    }

    private static Gather gatherRest(MemorySegment table, MemorySegment indices, IndexType indexType,
            MemorySegment dst, long nRows, long nIdx, long dstBytes) {
        requireWritable(dst, "dst");
        if (nIdx == 0) {
            return null;
        }
        MemorySegment d = dst.asSlice(0, dstBytes);
        requireDisjoint(table, "table", d);
        requireDisjoint(indices, "indices", d);
        checkIndices(indices, indexType, nIdx, nRows);
        return new Gather(nRows, nIdx, d);
    }

    /** {@code count * elementBytes}, or an IllegalArgumentException naming {@code what} when it overflows. */
    static long bytes(long count, long elementBytes, String what) {
        try {
            return Math.multiplyExact(count, elementBytes);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(what + " = " + count + " times " + elementBytes
                    + " bytes overflows a long");
        }
    }

    static long elements(long byteSize, int elementBytes, String what, String type) {
        if (byteSize % elementBytes != 0) {
            throw new IllegalArgumentException(what + " is " + byteSize + " bytes, not a whole number of " + type
                    + " elements (" + elementBytes + " bytes each)");
        }
        return byteSize / elementBytes;
    }

    static void requireSize(MemorySegment seg, long needed, String what, Conversion c, long count) {
        if (seg.byteSize() < needed) {
            throw new IndexOutOfBoundsException(c + ": " + what + " is " + seg.byteSize() + " bytes; count=" + count
                    + " needs " + needed);
        }
    }

    /** As {@link #requireSize} for a call that is not one {@link Conversion} (a copy, a two-step conversion). */
    static void requireBytes(MemorySegment seg, long needed, String what, Object call, long count) {
        if (seg.byteSize() < needed) {
            throw new IndexOutOfBoundsException(call + ": " + what + " is " + seg.byteSize() + " bytes; count="
                    + count + " needs " + needed);
        }
    }

    static void requireWritable(MemorySegment dst, String what) {
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException(what + " is read-only");
        }
    }

    static void requireDisjoint(MemorySegment src, String what, MemorySegment dst) {
        if (src.asOverlappingSlice(dst).isPresent()) {
            throw new IllegalArgumentException(what + " and dst overlap; the kernels need separate memory");
        }
    }

    /** Every index in {@code [0, nRows)}, read as the kernels will read them. */
    static void checkIndices(MemorySegment indices, IndexType type, long nIdx, long nRows) {
        if (type == IndexType.U32) {
            for (long i = 0; i < nIdx; i++) {
                long v = Integer.toUnsignedLong(indices.get(LittleEndian.I32, i * 4));
                if (v >= nRows) {
                    throw badIndex(i, v, nRows);
                }
            }
        } else {
            for (long i = 0; i < nIdx; i++) {
                long v = indices.get(LittleEndian.I64, i * 8);
                if (v < 0 || v >= nRows) {
                    throw badIndex(i, v, nRows);
                }
            }
        }
    }

    static IndexOutOfBoundsException badIndex(long i, long v, long nRows) {
        return new IndexOutOfBoundsException("indices[" + i + "] = " + v + " is outside [0, " + nRows
                + ") (the table has " + nRows + " rows); nothing was written");
    }

    /** The array range {@code [offset, offset + count)} as a heap segment. */
    static MemorySegment slice(MemorySegment whole, int length, int elementBytes, int offset, int count,
            String what) {
        if (offset < 0 || count < 0 || offset > length - count) {
            throw new IndexOutOfBoundsException(what + ": offset " + offset + " and count " + count
                    + " are outside an array of length " + length);
        }
        return whole.asSlice((long) offset * elementBytes, (long) count * elementBytes);
    }

    static MemorySegment floatsFrom(float[] dst, int dstOffset) {
        if (dstOffset < 0 || dstOffset > dst.length) {
            throw new IndexOutOfBoundsException("dst: offset " + dstOffset + " is outside an array of length "
                    + dst.length);
        }
        return MemorySegment.ofArray(dst).asSlice(dstOffset * 4L);
    }

    static void requireLittleEndian() {
        if (!LittleEndian.IS_NATIVE_ORDER) {
            throw new UnsupportedOperationException("the heap-array overloads need a little-endian JVM; use"
                    + " little-endian MemorySegments instead");
        }
    }

    static void requireArrays(Conversion c, Class<?> src, Class<?> dst) {
        Objects.requireNonNull(c, "conversion");
        requireLittleEndian();
        if (arrayElement(c.source()) != src || arrayElement(c.target()) != dst) {
            throw new IllegalArgumentException(c + " reads " + arrayElement(c.source()) + "[] and writes "
                    + arrayElement(c.target()) + "[], not " + src + "[] and " + dst + "[]");
        }
    }

    static Class<?> arrayElement(Dtype d) {
        return switch (d) {
            case I8, U8, F8_E4M3, F8_E5M2, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ -> byte.class;
            case I16, U16, F16, BF16 -> short.class;
            case I32, U32 -> int.class;
            case I64, U64 -> long.class;
            case F32 -> float.class;
            case F64 -> double.class;
            default -> throw new IllegalArgumentException("no kernel reads or writes " + d);
        };
    }


    /**
     * The error for an index that was in range when {@link #checkIndices} read it and out of range
     * when a path read it again: another thread wrote the indices during the call.
     */
    static IndexOutOfBoundsException indexChanged(long i, long v, long nRows) {
        return new IndexOutOfBoundsException("indices[" + i + "] = " + v + " is outside [0, " + nRows
                + ") although it was inside when checked: another thread changed the indices during the gather;"
                + " rows before it (in a parallel gather: of any range) may have been written");
    }
}
