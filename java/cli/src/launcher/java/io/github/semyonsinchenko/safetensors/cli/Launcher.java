package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.jdk.JdkFloor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * The jar's Main-Class. Compiled for Java 8 (its own compiler execution, see the module's pom), so
 * that an older {@code java -jar} gets one line saying what to install instead of an
 * {@code UnsupportedClassVersionError}. It names the CLI only as a string, so nothing compiled for
 * JDK 25 is loaded before the check ({@link JdkFloor}, also compiled for Java 8).
 */
public final class Launcher {
    /** Exit code when the running JVM is too old; the CLI's own codes are 0, 1 and 2. */
    static final int EXIT_OLD_JVM = 3;

    private static final String CLI = "io.github.semyonsinchenko.safetensors.cli.SafetensorsCli";

    private Launcher() {}

    /**
     * Checks the JVM, then runs the CLI.
     *
     * @param args the command line
     * @throws Throwable whatever the CLI's main throws
     */
    public static void main(String[] args) throws Throwable {
        if (!JdkFloor.satisfied()) {
            System.err.println(JdkFloor.message("safetensors-cli", "run the jar with a JDK " + JdkFloor.MIN_JDK
                    + "'s java (<jdk>/bin/java -jar ...), or, in a checkout, use bin/safetensors, which looks in"
                    + " JAVA_HOME, /usr/lib/jvm, /opt/java and /Library/Java/JavaVirtualMachines, or set JAVA_HOME to"
                    + " a JDK " + JdkFloor.MIN_JDK + "."));
            System.exit(EXIT_OLD_JVM);
        }
        Method main = Class.forName(CLI).getMethod("main", String[].class);
        try {
            main.invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
