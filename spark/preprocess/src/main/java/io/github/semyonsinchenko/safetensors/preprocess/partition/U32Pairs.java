package io.github.semyonsinchenko.safetensors.preprocess.partition;

import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.shiftleft;
import static org.apache.spark.sql.functions.shiftrightunsigned;

import java.util.Arrays;
import org.apache.spark.sql.Column;

/**
 * Two u32 values in one long, the first in the high half: {@code first << 32 | second}. Read as an
 * unsigned number, a pair orders as (first, then second), so one sort of longs sorts the pairs.
 * The graph's edges (source, target), the text cells' positions (global column, row) and the text
 * indices (row, index) are all packed this way.
 *
 * <p>Java's and Spark's sorts are signed, and a first value of 2^31 or more sets the sign bit. Java
 * arrays are sorted with the sign bit flipped around the sort ({@link #sort}); a Spark column that is
 * sorted stores its pairs flipped ({@link #sortable}), and {@link #fromSortable} turns them back.
 */
public final class U32Pairs {
    private static final long LOW = 0xFFFF_FFFFL;

    private U32Pairs() {}

    /** {@code first} and {@code second} (each a u32) as one pair. */
    public static long pack(long first, long second) {
        return first << 32 | (second & LOW);
    }

    /** The first value of {@code pair}. */
    public static long first(long pair) {
        return pair >>> 32;
    }

    /** The second value of {@code pair}. */
    public static long second(long pair) {
        return pair & LOW;
    }

    /** Sorts pairs into pair order. */
    public static void sort(long[] pairs) {
        flipSignBits(pairs);
        Arrays.sort(pairs);
        flipSignBits(pairs);
    }

    private static void flipSignBits(long[] pairs) {
        for (int i = 0; i < pairs.length; i++) {
            pairs[i] ^= Long.MIN_VALUE;
        }
    }

    /** The pair of two u32 columns, sign bit flipped, so Spark's signed sort of it is pair order. */
    public static Column sortable(Column first, Column second) {
        return shiftleft(first, 32).bitwiseOR(second).bitwiseXOR(lit(Long.MIN_VALUE));
    }

    /** The sortable (second, first) of a sortable (first, second). */
    public static Column swapSortable(Column sortable) {
        Column pair = sortable.bitwiseXOR(lit(Long.MIN_VALUE));
        return shiftrightunsigned(pair, 32).bitwiseOR(shiftleft(pair, 32)).bitwiseXOR(lit(Long.MIN_VALUE));
    }

    /** The pair a {@link #sortable} value holds. */
    public static long fromSortable(long sortable) {
        return sortable ^ Long.MIN_VALUE;
    }
}
