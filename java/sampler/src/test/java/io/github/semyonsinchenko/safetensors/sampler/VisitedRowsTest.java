package io.github.semyonsinchenko.safetensors.sampler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class VisitedRowsTest {
    @Test
    void behavesAsAMapFromRowToSequenceIdAcrossSequences() {
        SplittableRandom random = new SplittableRandom(3);
        for (int maxRows : new int[] {1, 16, 200, 1000}) {
            VisitedRows visited = new VisitedRows(maxRows);
            for (int sequence = 0; sequence < 50; sequence++) {
                visited.clear();
                Map<Integer, Integer> expected = new HashMap<>();
                // Rows clustered in a small range too, so that probes collide.
                int bound = sequence % 2 == 0 ? Integer.MAX_VALUE : 3 * maxRows;
                while (expected.size() < maxRows) {
                    int row = random.nextInt(bound);
                    boolean isNew = !expected.containsKey(row);
                    assertEquals(isNew, visited.add(row, expected.size()), "row " + row);
                    expected.putIfAbsent(row, expected.size());
                }
                for (int probe = 0; probe < 4 * maxRows; probe++) {
                    int row = random.nextInt(bound);
                    assertEquals(expected.getOrDefault(row, -1), visited.id(row), "row " + row);
                    assertEquals(expected.containsKey(row), visited.contains(row));
                }
                for (Map.Entry<Integer, Integer> e : expected.entrySet()) {
                    assertEquals(e.getValue(), visited.id(e.getKey()));
                }
            }
            visited.clear();
            assertFalse(visited.contains(0));
            assertTrue(visited.add(0, 0));
            assertEquals(0, visited.id(0));
        }
    }
}
