package io.github.semyonsinchenko.safetensors.kernels;

import java.util.Optional;

/**
 * The one entry point to dtype conversion and gather kernels. It decides once which path runs
 * (native library, else Java) and reports that choice; callers never touch FFM themselves.
 */
public final class Kernels {
    private Kernels() {}

    /** The native library's version, or empty when the Java path is in use. */
    public static Optional<String> nativeVersion() {
        return NativeLibrary.INSTANCE.map(lib -> lib.version);
    }

    /** The native instruction-set level ("avx512", "avx2", "scalar"), or empty without the library. */
    public static Optional<String> nativeIsa() {
        return NativeLibrary.INSTANCE.map(NativeLibrary::isaName);
    }
}
