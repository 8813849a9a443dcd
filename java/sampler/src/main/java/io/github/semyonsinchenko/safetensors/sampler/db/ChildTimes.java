package io.github.semyonsinchenko.safetensors.sampler.db;

/**
 * A derived index for the sampler's temporal filter (spec §10 step 6), built in memory from the
 * database and never written: for every incoming edge of {@code graph.bin}, in {@code in_col_idx}
 * order, the bits of the child row's time z-score (slot 14 of its table's temporal cell), or
 * {@link #ALWAYS_PASSES} when the child's table has no temporal column or the cell is null.
 *
 * <p>Why: walking a row's children then reads one array in the order of {@code in_col_idx}
 * instead of a validity bitmap and a timestamp cell at a random place of the child's table per
 * child. The filter's decision is unchanged ({@link #isAfter}). Every NaN z-score is stored as the
 * canonical NaN, so the sentinel (another NaN pattern) cannot be a stored value.
 */
public final class ChildTimes {
    /** The marker of a child that passes the filter whatever the observation time. */
    public static final int ALWAYS_PASSES = 0x7fc0_0001;
    private static final int CANONICAL_NAN = Float.floatToIntBits(Float.NaN);

    private final int[] bits;
    private final double meanUs;
    private final double stdUs;

    private ChildTimes(int[] bits, double meanUs, double stdUs) {
        this.bits = bits;
        this.meanUs = meanUs;
        this.stdUs = stdUs;
    }

    /** Builds the index of {@code db}: one pass over the temporal columns, one over {@code in_col_idx}. */
    static ChildTimes build(Database db) {
        int[] rowBits = new int[db.numRows()];
        java.util.Arrays.fill(rowBits, ALWAYS_PASSES);
        DatabaseMetadata m = db.metadata();
        for (int t = 0; t < db.numTables(); t++) {
            TableMetadata tm = m.tables().get(t);
            if (!tm.hasTemporalColumn()) {
                continue;
            }
            TableData table = db.table(t);
            int col = tm.temporalCol() - tm.colStart();
            int start = tm.rowStart();
            for (int r = 0; r < tm.numRows(); r++) {
                if (table.isValid(col, r)) {
                    float z = table.timestampZ(col, r);
                    rowBits[start + r] = Float.isNaN(z) ? CANONICAL_NAN : Float.floatToRawIntBits(z);
                }
            }
        }
        Graph g = db.graph();
        int[] bits = new int[g.numEdges()];
        for (int k = 0; k < bits.length; k++) {
            bits[k] = rowBits[g.inNeighbour(k)];
        }
        return new ChildTimes(bits, m.globalTsMeanUs(), m.globalTsStdUs());
    }

    /**
     * The index itself (not a copy: read it, never write it).
     *
     * @return one entry per incoming edge, indexed like {@link Graph#inNeighbour}
     */
    public int[] bits() {
        return bits;
    }

    /**
     * Whether the temporal filter drops the child of incoming edge {@code k}.
     *
     * @param k an incoming edge, as in {@link Graph#inNeighbour}
     * @param obsTime the observation time, epoch microseconds
     * @return true if the child's time, decoded as the reference decodes it,
     *     {@code (long) ((double) z * std + mean)}, is later than {@code obsTime}
     */
    public boolean isAfter(int k, long obsTime) {
        return isAfter(bits[k], obsTime, meanUs, stdUs);
    }

    /**
     * {@link #isAfter(int, long)} for an entry already read from {@link #bits()}.
     *
     * @param entry an entry of {@link #bits()}
     * @param obsTime the observation time, epoch microseconds
     * @param meanUs {@code global_ts_mean_us} of the database's metadata
     * @param stdUs {@code global_ts_std_us} of the database's metadata
     * @return true if the filter drops the child
     */
    public static boolean isAfter(int entry, long obsTime, double meanUs, double stdUs) {
        return entry != ALWAYS_PASSES
                && ValueEncoding.decodeMicros(Float.intBitsToFloat(entry), meanUs, stdUs) > obsTime;
    }
}
