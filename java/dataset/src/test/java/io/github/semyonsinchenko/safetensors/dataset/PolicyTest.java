package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.options.OptionException;
import io.github.semyonsinchenko.safetensors.options.Options;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PolicyTest {
    private static CommitPolicy parse(String name, String value) {
        return CommitPolicy.parse(Options.of("safetensors write", Map.of(name, value)));
    }

    @Test
    void optionsParseCaseInsensitivelyWithDefaults() {
        assertEquals(1, CommitPolicy.DEFAULT.retainVersions());
        assertEquals(Duration.ofDays(1), CommitPolicy.DEFAULT.orphanAge());
        assertEquals(CommitPolicy.DEFAULT, CommitPolicy.parse(Options.of("x", Map.of())));
        assertEquals(90, parse("ORPHAN_AGE", "90s").orphanAge().toSeconds());
        assertEquals(Duration.ofMillis(250), parse("orphan_age", "250ms").orphanAge());
        assertEquals(Duration.ofDays(7), parse("orphan_age", "7d").orphanAge());
        assertEquals(3, parse("retain_versions", " 3 ").retainVersions());
        assertTrue(parse("fsync", "TRUE").fsync());
        assertEquals(CommitPolicy.ManifestWrite.PUT, parse("manifest_write", "Put").manifestWrite());
        assertEquals(3, CommitPolicy.parse(Map.of("Commit_Attempts", "3")).maxAttempts());
    }

    @Test
    void badValuesNameTheOptionAndWhatIsAllowed() {
        OptionException e = assertThrows(OptionException.class, () -> parse("retain_versions", "-1"));
        assertEquals("safetensors write option 'retain_versions' is '-1'; allowed: a whole number of versions at"
                + " least 0 (default 1)", e.getMessage());
        e = assertThrows(OptionException.class, () -> parse("orphan_age", "soon"));
        assertTrue(e.getMessage().endsWith("'orphan_age' is 'soon'; allowed: a duration such as 90s, 30m, 12h or 7d"),
                e.getMessage());
        e = assertThrows(OptionException.class, () -> parse("fsync", "yes"));
        assertTrue(e.getMessage().endsWith("'fsync' is 'yes'; allowed: true, false (default)"), e.getMessage());
        e = assertThrows(OptionException.class, () -> parse("manifest_write", "copy"));
        assertTrue(e.getMessage().endsWith("allowed: auto (default), rename, put"), e.getMessage());
        e = assertThrows(OptionException.class, () -> parse("commit_attempts", "0"));
        assertTrue(e.getMessage().contains("'commit_attempts' is '0'; allowed: a whole number of attempts at least 1"),
                e.getMessage());
    }
}
