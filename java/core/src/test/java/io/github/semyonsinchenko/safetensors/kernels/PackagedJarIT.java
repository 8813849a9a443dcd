package io.github.semyonsinchenko.safetensors.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged core jar on its own: a fresh JVM (the same JDK as this one) with only the jar and
 * jackson-core on its class path finds the native library inside the jar, extracts it and runs
 * the kernels natively; without {@code --add-modules=jdk.incubator.vector} it never links the
 * Vector API, and forcing that path fails with a clear message. Runs in the failsafe
 * integration-test phase, after the jar is built.
 */
class PackagedJarIT {
    static final String PROBE = """
            import io.github.semyonsinchenko.safetensors.kernels.*;

            public class Probe {
                public static void main(String[] args) {
                    try {
                        System.out.println("impl=" + Kernels.implementation());
                    } catch (IllegalStateException e) {
                        System.out.println("error=" + e.getMessage());
                        return;
                    }
                    System.out.println("library=" + Kernels.nativeLibraryPath().map(Object::toString).orElse("none"));
                    System.out.println("isa=" + Kernels.nativeIsa().orElse("none"));
                    float[] out = new float[3];
                    Kernels.convert(Conversion.BF16_TO_F32, new short[] {0x3F80, (short) 0xC000, 0x7FC1}, 0, out, 0, 3);
                    short[] back = new short[3];
                    Kernels.convert(Conversion.F32_TO_F16_RNE, new float[] {65520f, 1f, out[2]}, 0, back, 0, 3);
                    System.out.printf("out=%s,%s,%08x back=%04x,%04x,%04x%n", out[0], out[1],
                            Float.floatToRawIntBits(out[2]), back[0], back[1], back[2]);
                }
            }
            """;

    static Path coreJar;
    static Path jacksonJar;
    static Path probeDir;

    @BeforeAll
    static void compileProbe(@TempDir Path dir) throws IOException {
        coreJar = Path.of(System.getProperty("safetensors.core.jar", "missing"));
        assertTrue(Files.isRegularFile(coreJar), "the packaged jar is missing: " + coreJar);
        jacksonJar = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .map(Path::of)
                .filter(p -> p.getFileName().toString().startsWith("jackson-core"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("jackson-core is not on the test class path"));
        probeDir = dir;
        Path src = dir.resolve("Probe.java");
        Files.writeString(src, PROBE);
        int rc = ToolProvider.getSystemJavaCompiler().run(null, null, null, "-d", dir.toString(), "-cp", coreJar
                + File.pathSeparator + jacksonJar, src.toString());
        assertEquals(0, rc, "javac Probe.java");
    }

    record Run(int exit, Map<String, String> values, String output) {}

    static Run probe(List<String> jvmArgs) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElseThrow());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(coreJar + File.pathSeparator + jacksonJar + File.pathSeparator + probeDir);
        cmd.add("Probe");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "probe timed out");
        Map<String, String> values = new HashMap<>();
        for (String line : out.split("\n")) {
            for (String part : line.split(" ")) {
                int eq = part.indexOf('=');
                if (eq > 0 && !part.startsWith("-")) {
                    values.putIfAbsent(part.substring(0, eq), line.startsWith("error=") ? line.substring(6)
                            : part.substring(eq + 1).strip());
                }
            }
        }
        return new Run(p.exitValue(), values, out);
    }

    static void assertConverted(Run r) {
        assertEquals("1.0,-2.0,7fc10000", r.values().get("out"), r.output());
        // BF16 0x7FC1 widens to F32 0x7FC10000 exactly; to F16 that is 0x7E00 | (0x410000 >> 13) = 0x7E08.
        assertEquals("7c00,3c00,7e08", r.values().get("back"), r.output());
    }

    @Test
    void theJarAloneRunsNativeWithoutTheVectorModule(@TempDir Path logDir) throws Exception {
        Path classLog = logDir.resolve("classes.log");
        Run r = probe(List.of("--enable-native-access=ALL-UNNAMED", "-Xlog:class+load=info:file=" + classLog));
        assertEquals(0, r.exit(), r.output());
        assertEquals("NATIVE", r.values().get("impl"), r.output());
        Path lib = Path.of(r.values().get("library"));
        assertFalse(lib.toAbsolutePath().startsWith(coreJar.toAbsolutePath().getParent()),
                "the library came from the build directory, not the jar: " + lib);
        assertTrue(lib.getFileName().toString().startsWith("libsafetensors_native"), r.output());
        assertFalse(r.values().get("isa").equals("none"), r.output());
        assertConverted(r);
        String loaded = Files.readString(classLog);
        assertTrue(loaded.contains("io.github.semyonsinchenko.safetensors.kernels.NativeBackend"), "no NativeBackend?");
        assertFalse(loaded.contains("jdk.incubator.vector"), "a Vector API class was loaded");
        assertFalse(loaded.contains("VectorBackend"), "VectorBackend was loaded");
    }

    @Test
    void forcedVectorWithoutTheModuleSaysWhy() throws Exception {
        Run r = probe(List.of("--enable-native-access=ALL-UNNAMED", "-Dsafetensors.kernels=vector"));
        assertEquals(0, r.exit(), r.output());
        String error = r.values().get("error");
        assertTrue(error != null && error.contains("forces the vector kernels")
                && error.contains("--add-modules=jdk.incubator.vector"), r.output());
    }

    @Test
    void forcedVectorWithTheModule() throws Exception {
        Run r = probe(List.of("--add-modules=jdk.incubator.vector", "-Dsafetensors.kernels=vector"));
        assertEquals(0, r.exit(), r.output());
        assertEquals("VECTOR", r.values().get("impl"), r.output());
        assertConverted(r);
    }

    @Test
    void forcedScalar() throws Exception {
        Run r = probe(List.of("-Dsafetensors.kernels=scalar"));
        assertEquals(0, r.exit(), r.output());
        assertEquals("SCALAR", r.values().get("impl"), r.output());
        assertConverted(r);
    }
}
