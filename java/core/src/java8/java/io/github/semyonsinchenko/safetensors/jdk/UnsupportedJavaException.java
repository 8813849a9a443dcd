package io.github.semyonsinchenko.safetensors.jdk;

/**
 * The running JVM is older than {@link JdkFloor#MIN_JDK}; the message says which Java was found
 * and what to do. Compiled for Java 8, like {@link JdkFloor}.
 */
public final class UnsupportedJavaException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with the given one-line message.
     *
     * @param message what was found and the fix (see {@link JdkFloor#message})
     */
    public UnsupportedJavaException(String message) {
        super(message);
    }
}
