package io.github.semyonsinchenko.safetensors.jdk;

import java.util.Locale;

/**
 * The JDK floor of safetensors-jvm and the one message for a JVM below it.
 *
 * <p>Compiled for Java 8 (its own compiler execution in the core module), so that the classes a
 * runtime loads by name (the CLI's main class, the Spark data source, extension and executor-side
 * entry points) can load on any Java, check it, and say in one line what is needed instead of
 * failing with {@code UnsupportedClassVersionError}. It uses nothing newer than Java 8.
 */
public final class JdkFloor {
    /**
     * The lowest Java feature version safetensors-jvm runs on. The Maven enforcer
     * ({@code min.jdk.version}), {@code scripts/jdk.sh} and the Python packages hold the same
     * number; tests keep them equal.
     */
    public static final int MIN_JDK = 25;

    private JdkFloor() {}

    /**
     * The feature version of a {@code java.specification.version} string.
     *
     * @param spec a specification version such as {@code "1.8"}, {@code "17"} or {@code "26-ea"}
     * @return its feature number (8 for {@code "1.8"}), or 0 when it does not start with a number
     */
    public static int feature(String spec) {
        String s = spec.startsWith("1.") ? spec.substring(2) : spec;
        int end = 0;
        while (end < s.length() && Character.isDigit(s.charAt(end))) {
            end++;
        }
        return end == 0 ? 0 : Integer.parseInt(s.substring(0, end));
    }

    /**
     * The feature version of the running JVM.
     *
     * @return the running JVM's feature version, e.g. 17 or 25
     */
    public static int running() {
        return feature(System.getProperty("java.specification.version", "0"));
    }

    /**
     * Whether the running JVM is at least {@link #MIN_JDK}.
     *
     * @return true on Java 25 or newer
     */
    public static boolean satisfied() {
        return running() >= MIN_JDK;
    }

    /**
     * The one-line message for a JVM below the floor: who needs what, the Java found and where it
     * lives, and the fix.
     *
     * @param component what needs the JDK, e.g. {@code "safetensors-spark on this executor"}
     * @param fix what to do about it, one clause
     * @return the message
     */
    public static String message(String component, String fix) {
        return String.format(Locale.ROOT, "%s needs JDK %d or newer, but runs on Java %s (%s); %s", component, MIN_JDK,
                System.getProperty("java.version", "?"), System.getProperty("java.home", "?"), fix);
    }

    /**
     * Throws {@link UnsupportedJavaException} with {@link #message} unless the running JVM is at
     * least {@link #MIN_JDK}.
     *
     * @param component what needs the JDK
     * @param fix what to do about it
     * @throws UnsupportedJavaException when the running JVM is older than {@link #MIN_JDK}
     */
    public static void require(String component, String fix) {
        if (!satisfied()) {
            throw new UnsupportedJavaException(message(component, fix));
        }
    }
}
