package io.github.semyonsinchenko.safetensors.sampler.db;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.sampler.Fixtures;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticDatabase;
import java.io.IOException;
import java.nio.file.Path;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The derived child-time index decides the temporal filter exactly as reading each child's cell does. */
class ChildTimesTest {
    @TempDir
    Path tmp;

    @Test
    void matchesTheCellByCellRuleOnTheFixture() throws IOException {
        try (Database db = Database.open(Fixtures.db())) {
            assertSameDecisions(db);
        }
    }

    @Test
    void matchesTheCellByCellRuleOnASyntheticDatabaseWithNullTimes() throws IOException {
        SyntheticDatabase.Summary s = SyntheticDatabase.generate(tmp.resolve("db"), 4000, 5,
                SyntheticDatabase.Embeddings.ZERO);
        try (Database db = Database.open(s.dir())) {
            assertTrue(assertSameDecisions(db) > 0, "the generator writes null times (about 5% of cells)");
        }
    }

    /** The spec's rule (§10 step 6), read from the child's table for every incoming edge. */
    private static boolean referenceIsAfter(Database db, int child, long obsTime) {
        int t = db.tableOfRow(child);
        TableMetadata tm = db.metadata().tables().get(t);
        if (!tm.hasTemporalColumn()) {
            return false;
        }
        TableData table = db.table(t);
        int col = tm.temporalCol() - tm.colStart();
        int local = child - tm.rowStart();
        if (!table.isValid(col, local)) {
            return false;
        }
        long raw = ValueEncoding.decodeMicros(table.timestampZ(col, local), db.metadata().globalTsMeanUs(),
                db.metadata().globalTsStdUs());
        return raw > obsTime;
    }

    /** Returns the number of children that always pass (null time or no temporal column). */
    private static int assertSameDecisions(Database db) {
        ChildTimes times = db.childTimes();
        Graph g = db.graph();
        assertEquals(g.numEdges(), times.bits().length);
        // Observation times at and around every child's own time, plus the extremes.
        TreeSet<Long> observations = new TreeSet<>();
        observations.add(Long.MIN_VALUE);
        observations.add(Long.MAX_VALUE - 1);
        int nullTimes = 0;
        for (int k = 0; k < g.numEdges(); k++) {
            int entry = times.bits()[k];
            if (entry == ChildTimes.ALWAYS_PASSES) {
                nullTimes++;
                continue;
            }
            if (k % 37 == 0) {
                long raw = ValueEncoding.decodeMicros(Float.intBitsToFloat(entry), db.metadata().globalTsMeanUs(),
                        db.metadata().globalTsStdUs());
                observations.add(raw - 1);
                observations.add(raw);
                observations.add(raw + 1);
            }
        }
        int after = 0;
        for (long obs : observations) {
            for (int k = 0; k < g.numEdges(); k++) {
                boolean expected = referenceIsAfter(db, g.inNeighbour(k), obs);
                assertEquals(expected, times.isAfter(k, obs), "edge " + k + " at " + obs);
                after += expected ? 1 : 0;
            }
        }
        assertTrue(after > 0, "some children are after some observation time");
        assertTrue(observations.size() > 10);
        return nullTimes;
    }

    @Test
    void specialValuesDecodeAsTheReferenceDoes() {
        double mean = 1.6e15;
        double std = 4e13;
        int nan = Float.floatToIntBits(Float.NaN);
        // (long) NaN == 0: a NaN z-score is a time of 0 µs.
        assertTrue(ChildTimes.isAfter(nan, -1, mean, std));
        assertFalse(ChildTimes.isAfter(nan, 0, mean, std));
        // -inf and +inf saturate.
        assertFalse(ChildTimes.isAfter(Float.floatToIntBits(Float.NEGATIVE_INFINITY), Long.MIN_VALUE, mean, std));
        assertTrue(ChildTimes.isAfter(Float.floatToIntBits(Float.POSITIVE_INFINITY), Long.MAX_VALUE - 1, mean, std));
        // The marker always passes, whatever the observation time or statistics.
        assertFalse(ChildTimes.isAfter(ChildTimes.ALWAYS_PASSES, Long.MIN_VALUE, mean, std));
        assertFalse(ChildTimes.isAfter(ChildTimes.ALWAYS_PASSES, Long.MIN_VALUE, mean, 0.0));
        assertTrue(Float.isNaN(Float.intBitsToFloat(ChildTimes.ALWAYS_PASSES)));
        assertTrue(ChildTimes.ALWAYS_PASSES != nan, "the marker is not the canonical NaN every stored NaN becomes");
        // A zero std decodes every time to the mean.
        assertTrue(ChildTimes.isAfter(Float.floatToIntBits(-3f), (long) mean - 1, mean, 0.0));
        assertFalse(ChildTimes.isAfter(Float.floatToIntBits(-3f), (long) mean, mean, 0.0));
    }
}
