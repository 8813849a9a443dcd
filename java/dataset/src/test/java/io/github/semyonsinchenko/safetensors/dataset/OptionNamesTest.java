package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OptionNamesTest {
    static final Set<String> KNOWN = Set.of("path", "batch_size", "name_col", "generate_index");

    @Test
    void aMisspeltOptionNamesTheClosestValidOne() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> OptionNames.check(List.of("path", "bach_size"), KNOWN, "safetensors write"));
        assertTrue(e.getMessage().contains("unknown safetensors write option 'bach_size'; did you mean 'batch_size'?"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> OptionNames.check(List.of("zzzzzz"), KNOWN, "x"));
        assertTrue(!e.getMessage().contains("did you mean") && e.getMessage().contains("valid: batch_size"),
                e.getMessage());
    }

    @Test
    void knownSparkAndHadoopNamesPass() {
        OptionNames.check(List.of("PATH", "Name_Col", "fs.s3a.endpoint", "__partition_columns"), KNOWN, "x");
        assertEquals(1, OptionNames.distance("bach_size", "batch_size"));
    }
}
