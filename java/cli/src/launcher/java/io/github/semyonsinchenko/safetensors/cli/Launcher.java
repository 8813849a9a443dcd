package io.github.semyonsinchenko.safetensors.cli;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * The jar's Main-Class. Compiled for Java 8 (its own compiler execution, see the module's pom), so
 * that an older {@code java -jar} gets one line saying what to install instead of an
 * {@code UnsupportedClassVersionError}. It names the CLI only as a string, so nothing compiled for
 * JDK 25 is loaded before the check.
 */
public final class Launcher {
    /** The JDK floor; pom.xml (min.jdk.version) and scripts/jdk.sh hold the same number, a test keeps them equal. */
    static final int MIN_JDK = 25;
    /** Exit code when the running JVM is too old; the CLI's own codes are 0, 1 and 2. */
    static final int EXIT_OLD_JVM = 3;

    private static final String CLI = "io.github.semyonsinchenko.safetensors.cli.SafetensorsCli";

    private Launcher() {}

    public static void main(String[] args) throws Throwable {
        String spec = System.getProperty("java.specification.version", "0");
        int major = feature(spec);
        if (major < MIN_JDK) {
            System.err.println("safetensors-cli needs JDK " + MIN_JDK + " or newer, but runs on Java " + spec
                    + " (" + System.getProperty("java.home") + "); use bin/safetensors, which looks in JAVA_HOME,"
                    + " /usr/lib/jvm, /opt/java and /Library/Java/JavaVirtualMachines, or set JAVA_HOME to a JDK "
                    + MIN_JDK + ".");
            System.exit(EXIT_OLD_JVM);
        }
        Method main = Class.forName(CLI).getMethod("main", String[].class);
        try {
            main.invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** "1.8" is Java 8; from 9 on the specification version is the feature number. */
    static int feature(String spec) {
        String s = spec.startsWith("1.") ? spec.substring(2) : spec;
        int end = 0;
        while (end < s.length() && Character.isDigit(s.charAt(end))) {
            end++;
        }
        return end == 0 ? 0 : Integer.parseInt(s.substring(0, end));
    }
}
