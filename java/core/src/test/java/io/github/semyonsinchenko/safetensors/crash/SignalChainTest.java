package io.github.semyonsinchenko.safetensors.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The native library's fault handler sits in front of the JVM's: the JVM's own SIGSEGV uses
 * (implicit null checks, stack overflow) must still reach it unchanged, with and without the JDK's
 * libjsig preloaded (which keeps the JVM's handler first and calls ours as the chained one).
 */
class SignalChainTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void theJvmStillGetsItsOwnSignals(boolean libjsig) throws Exception {
        List<String> jvm = List.of("-Xbatch", "-Dsafetensors.kernels=native");
        ChildJvm r = libjsig
                ? ChildJvm.run(dir, SignalChainChild.class, jvm,
                        Path.of(System.getProperty("java.home"), "lib", "libjsig.so"))
                : ChildJvm.run(dir, SignalChainChild.class, jvm);
        assertEquals(0, r.exitCode(), r.output());
        assertTrue(r.output().contains("ALL CLEAN"), r.output());
    }
}
