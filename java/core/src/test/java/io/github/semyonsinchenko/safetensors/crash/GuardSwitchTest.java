package io.github.semyonsinchenko.safetensors.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The run-time switch of the native fault guard does what the kernel report relies on when it
 * measures the guard's cost with it: off, a fault on a truncated mapping ends the JVM as it did
 * before the guard; on again, the fault is a typed exception again.
 */
class GuardSwitchTest {
    @TempDir
    Path dir;

    @Test
    void switchedOffAFaultEndsTheJvm() throws Exception {
        ChildJvm r = ChildJvm.run(dir, GuardSwitchChild.class, List.of("-Dsafetensors.kernels=native"),
                dir.toString(), "off");
        assertTrue(r.output().contains("active at start: true"), r.output());
        assertTrue(r.output().contains("switched off: true, active: false"), r.output());
        assertFalse(List.of(0, 2, 3).contains(r.exitCode()), "exit " + r.exitCode() + "\n" + r.output());
        assertTrue(r.output().contains("SIGBUS"), r.output());
    }

    @Test
    void switchedOnAgainAFaultIsAnException() throws Exception {
        ChildJvm r = ChildJvm.run(dir, GuardSwitchChild.class, List.of("-Dsafetensors.kernels=native"),
                dir.toString(), "on-again");
        assertEquals(0, r.exitCode(), r.output());
        assertTrue(r.output().contains("switched on: true"), r.output());
        assertTrue(r.output().contains("caught: ") && r.output().contains("table.bin"), r.output());
    }
}
