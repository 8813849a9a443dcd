package io.github.semyonsinchenko.safetensors.kernels;

import java.util.ArrayList;
import java.util.List;

/**
 * One way to run the kernels in a test: the scalar Java path, the Vector path, or the native
 * library at one ISA level. The native levels share one library, so {@link #activate()} switches
 * it (st_select_isa) before a run; {@link #restoreNativeIsa()} puts back the level it chose.
 */
record KernelPath(String name, Backend backend, String isa) {
    static final List<String> NATIVE_ISAS = List.of("scalar", "avx2", "avx512", "avx512bf16");
    private static final String INITIAL_ISA = Kernels.nativeIsa().orElse(null);

    /** Every path this machine can run. Vector and native are required: the build provides both. */
    static List<KernelPath> all() {
        List<KernelPath> paths = new ArrayList<>();
        paths.add(new KernelPath("java-scalar", PathSelection.backend(Implementation.SCALAR), null));
        paths.add(new KernelPath("java-vector", PathSelection.backend(Implementation.VECTOR), null));
        Backend nat = PathSelection.backend(Implementation.NATIVE);
        for (String isa : NATIVE_ISAS) {
            if (NativeBackend.isaSupported(isa)) {
                paths.add(new KernelPath("native-" + isa, nat, isa));
            }
        }
        return paths;
    }

    /** Every path but the scalar Java one, which is the oracle. */
    static List<KernelPath> candidates() {
        return all().stream().filter(p -> !p.name.equals("java-scalar")).toList();
    }

    KernelPath activate() {
        if (isa != null) {
            NativeBackend.selectIsa(isa);
        }
        return this;
    }

    static void restoreNativeIsa() {
        if (INITIAL_ISA != null) {
            NativeBackend.selectIsa(INITIAL_ISA);
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
