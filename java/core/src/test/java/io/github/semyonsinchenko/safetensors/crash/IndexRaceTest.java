package io.github.semyonsinchenko.safetensors.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Gathers on every path while another thread rewrites the indices: only rows of the table are ever
 * read (wrong rows are allowed), and a bad index is an IndexOutOfBoundsException, never a fault.
 * Runs in a child JVM so that a crash fails the test instead of killing the test runner.
 */
class IndexRaceTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"native", "vector", "scalar"})
    void racingIndexWritesNeverReadOutsideTheTable(String path) throws Exception {
        ChildJvm r = ChildJvm.run(dir, IndexRaceChild.class, List.of("-Dsafetensors.kernels=" + path),
                dir.toString(), "3");
        assertEquals(0, r.exitCode(), r.output());
        assertTrue(r.output().contains("ALL CLEAN on " + path.toUpperCase(Locale.ROOT)), r.output());
    }
}
