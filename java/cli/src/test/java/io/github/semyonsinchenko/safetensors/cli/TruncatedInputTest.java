package io.github.semyonsinchenko.safetensors.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code convert} of an input truncated by another process while the command reads it: exit code
 * 1 with a message naming the file, no temporary file left behind, and no JVM crash (it used to
 * die by SIGBUS in the native kernels and leave the whole temporary output). In a child JVM so
 * that a crash fails this test rather than the test runner.
 */
class TruncatedInputTest {
    @TempDir
    Path dir;

    @Test
    void convertOfATruncatedInputFailsCleanly() throws Exception {
        int code = -1;
        String output = "";
        for (int attempt = 0; attempt < 3; attempt++) { // 3 = the conversion finished before the truncation
            Path work = Files.createDirectory(dir.resolve("attempt" + attempt));
            List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m", "--enable-native-access=ALL-UNNAMED", "-XX:-CreateCoredumpOnCrash",
                    "-XX:ErrorFile=" + work.resolve("hs_err_%p.log"), "-cp", System.getProperty("java.class.path"),
                    TruncatedInputChild.class.getName(), work.toString());
            File log = dir.resolve("child" + attempt + ".log").toFile();
            Process p = new ProcessBuilder(cmd).directory(work.toFile()).redirectErrorStream(true).redirectOutput(log)
                    .start();
            assertTrue(p.waitFor(3, TimeUnit.MINUTES), "the child JVM hung");
            code = p.exitValue();
            output = Files.readString(log.toPath(), StandardCharsets.UTF_8);
            if (code != 3) {
                break;
            }
        }
        assertEquals(0, code, output);
        assertTrue(output.contains("CLEAN FAILURE"), output);
    }
}
