package io.github.semyonsinchenko.safetensors.sampler.synth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData.Column;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData.Table;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData.Task;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The dataset's raw values, which both renderings (database and headwater's input) start from. */
class SyntheticDataTest {

    @Test
    void distinctTextIndicesAreDistinctStrings() {
        Set<String> seen = new HashSet<>();
        for (int k = 0; k < 300_000; k++) {
            String s = SyntheticData.text(k);
            assertTrue(seen.add(s), "index " + k + " repeats the text '" + s + "'");
        }
        assertEquals(SyntheticData.text(12_345), SyntheticData.text(12_345));
    }

    @Test
    void rawValuesAreConsistentAcrossTablesAndTasks() {
        SyntheticData data = SyntheticData.generate(2000, 5);
        int rows = 0;
        for (Table t : data.tables()) {
            assertEquals(rows, t.rowStart(), t.name());
            rows += t.rows();
            assertEquals("Id", t.columns().getFirst().name());
            assertEquals(SemanticType.TIMESTAMP, t.columns().get(t.temporal()).stype());
            for (int i = 0; i < t.rows(); i++) {
                assertEquals((long) i, t.columns().getFirst().value(i), "a primary key is its row");
            }
            for (Column c : t.rawColumns()) {
                for (int i = 0; i < t.rows(); i++) {
                    Object v = c.value(i);
                    if (!c.isValid(i)) {
                        assertNull(v);
                        continue;
                    }
                    switch (c.stype()) {
                        case IDENTIFIER -> {
                            if (c.foreignTable() >= 0) {
                                long key = (Long) v;
                                assertTrue(key >= 0 && key < data.tables().get(c.foreignTable()).rows(), c.name());
                            }
                        }
                        case CATEGORICAL -> assertTrue(c.categories().contains((String) v), c.name());
                        case TEXT -> assertEquals(SyntheticData.text(c.index(i)), v);
                        case TIMESTAMP -> assertEquals(c.micros(i), v);
                        default -> { }
                    }
                }
            }
        }
        assertEquals(3, data.tasks().size());
        for (Task task : data.tasks()) {
            Table anchor = data.tables().get(task.anchorTable());
            assertTrue(anchor.rawColumns().contains(task.target()), task.name());
            assertTrue(task.target().stype().isTaskTarget(), task.name());
        }
        Table posts = data.tables().get(1);
        assertEquals("ScoreIn30Days", posts.labels().getFirst().name());
        assertTrue(posts.columns().stream().noneMatch(c -> c.name().equals("ScoreIn30Days")), "a label is no column");
        assertThrows(IllegalArgumentException.class, () -> SyntheticData.generate(SyntheticData.MIN_ROWS - 1, 1));
    }
}
