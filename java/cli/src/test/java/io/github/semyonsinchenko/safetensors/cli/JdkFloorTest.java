package io.github.semyonsinchenko.safetensors.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.jdk.JdkFloor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The JDK floor is one number in three places: the enforcer, scripts/jdk.sh and JdkFloor (the launcher and the Spark entry classes use it). */
class JdkFloorTest {
    @Test
    void enforcerScriptsAndLauncherAgreeOnTheFloor() throws IOException {
        int pom = Integer.parseInt(System.getProperty("min.jdk.version"));
        Path script = Path.of(System.getProperty("safetensors.repo.root"), "scripts", "jdk.sh");
        Matcher m = Pattern.compile("(?m)^ST_MIN_JDK=(\\d+)$").matcher(Files.readString(script));
        assertTrue(m.find(), "scripts/jdk.sh sets ST_MIN_JDK");
        assertEquals(pom, Integer.parseInt(m.group(1)), "scripts/jdk.sh vs pom.xml min.jdk.version");
        assertEquals(pom, JdkFloor.MIN_JDK, "JdkFloor.MIN_JDK vs pom.xml min.jdk.version");
    }

    @Test
    void floorReadsOldAndNewSpecificationVersions() {
        assertEquals(8, JdkFloor.feature("1.8"));
        assertEquals(17, JdkFloor.feature("17"));
        assertEquals(25, JdkFloor.feature("25"));
        assertEquals(26, JdkFloor.feature("26-ea"));
        assertEquals(0, JdkFloor.feature("garbage"));
    }
}
