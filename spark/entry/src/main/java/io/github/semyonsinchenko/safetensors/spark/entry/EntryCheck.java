package io.github.semyonsinchenko.safetensors.spark.entry;

import io.github.semyonsinchenko.safetensors.jdk.JdkFloor;

/**
 * The Java check of the connector's entry classes, on the driver and on executors, and the one
 * place that loads the real (JDK 25) classes behind them.
 *
 * <p>This package and the two classes Spark loads by name ({@code SafetensorsDataSource},
 * {@code SafetensorsExtensions}) are compiled for Java 17, the oldest Java Spark 4 runs on, so that
 * an older JVM loads them, runs the check and fails with one line instead of an
 * {@code UnsupportedClassVersionError}.
 */
public final class EntryCheck {
    private EntryCheck() {}

    /**
     * Fails unless the driver runs JDK 25 or newer.
     *
     * @throws io.github.semyonsinchenko.safetensors.jdk.UnsupportedJavaException on an older driver
     */
    public static void requireOnDriver() {
        JdkFloor.require("safetensors-spark (on the Spark driver)", "start Spark on a JDK " + JdkFloor.MIN_JDK
                + ": from Python, safetensors_spark.with_safetensors(builder) does; otherwise set JAVA_HOME to a JDK "
                + JdkFloor.MIN_JDK + " before starting Spark.");
    }

    /**
     * Fails unless this executor runs JDK 25 or newer.
     *
     * @throws io.github.semyonsinchenko.safetensors.jdk.UnsupportedJavaException on an older executor
     */
    public static void requireOnExecutor() {
        JdkFloor.require("safetensors-spark (on an executor)", "run the executors on a JDK " + JdkFloor.MIN_JDK
                + ": set spark.executorEnv.JAVA_HOME to its path on the workers (YARN: also"
                + " spark.yarn.appMasterEnv.JAVA_HOME), e.g. with_safetensors(builder, executor_java_home=...) from Python.");
    }

    /**
     * A new instance of the JDK 25 class {@code className}, created only after the driver check.
     *
     * @param className the implementation's binary name
     * @param type the interface the caller uses it through
     * @param <T> that interface
     * @return the instance
     */
    public static <T> T driverSide(String className, Class<T> type) {
        requireOnDriver();
        try {
            return type.cast(Class.forName(className, true, EntryCheck.class.getClassLoader())
                    .getDeclaredConstructor().newInstance());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("safetensors-spark: cannot create " + className + ": " + e, e);
        }
    }
}
