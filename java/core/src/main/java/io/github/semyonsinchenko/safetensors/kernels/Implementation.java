package io.github.semyonsinchenko.safetensors.kernels;

/** Which code runs the {@link Kernels}: chosen once per JVM, see {@link Kernels#implementation()}. */
public enum Implementation {
    /** {@code libsafetensors_native} through FFM, at the ISA level of {@link Kernels#nativeIsa()}. */
    NATIVE,
    /** Java with the incubating Vector API ({@code jdk.incubator.vector}). */
    VECTOR,
    /** Plain Java, one element at a time. Always available; the reference the other paths are tested against. */
    SCALAR
}
