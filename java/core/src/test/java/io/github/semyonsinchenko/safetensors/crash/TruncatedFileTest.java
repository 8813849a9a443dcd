package io.github.semyonsinchenko.safetensors.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A file truncated by another handle while mapped: every kernel path and the Tensor accessors
 * throw a typed exception naming the file and the tensor, and the JVM exits normally (it used to
 * die by SIGBUS in the native kernels and throw a bare InternalError on the Java paths).
 */
class TruncatedFileTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"native", "vector", "scalar"})
    void everyReadOfLostPagesIsATypedException(String path) throws Exception {
        // -Xbatch: the warmed-up paths are compiled before the faults, deterministically.
        ChildJvm r = ChildJvm.run(dir, TruncatedFileChild.class, List.of("-Xbatch", "-Dsafetensors.kernels=" + path),
                dir.toString());
        assertEquals(0, r.exitCode(), r.output());
        assertTrue(r.output().contains("ALL CLEAN on " + path.toUpperCase(java.util.Locale.ROOT)), r.output());
    }
}
