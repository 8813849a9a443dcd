package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PolicyTest {
    @Test
    void optionsParseCaseInsensitivelyWithDefaults() {
        assertEquals(1, CommitPolicy.DEFAULT.retainVersions());
        assertEquals(Duration.ofDays(1), CommitPolicy.DEFAULT.orphanAge());
        assertEquals(90, CommitPolicy.parse(Map.of("ORPHAN_AGE", "90s")).orphanAge().toSeconds());
        assertEquals(Duration.ofMillis(250), CommitPolicy.parse(Map.of("orphan_age", "250ms")).orphanAge());
        assertEquals(Duration.ofDays(7), CommitPolicy.parse(Map.of("orphan_age", "7d")).orphanAge());
        assertEquals(3, CommitPolicy.parse(Map.of("retain_versions", " 3 ")).retainVersions());
        assertTrue(CommitPolicy.parse(Map.of("fsync", "TRUE")).fsync());
    }

    @Test
    void badValuesNameTheOptionAndWhatIsAllowed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CommitPolicy.parse(Map.of("retain_versions", "-1")));
        assertTrue(e.getMessage().contains("'retain_versions' must be >= 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CommitPolicy.parse(Map.of("orphan_age", "soon")));
        assertTrue(e.getMessage().contains("'orphan_age' must be a duration"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CommitPolicy.parse(Map.of("fsync", "yes")));
        assertTrue(e.getMessage().contains("'fsync' must be true or false"), e.getMessage());
    }
}
