package io.github.semyonsinchenko.safetensors.crash;

import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Child JVM: with the native library (and its SIGSEGV/SIGBUS handler) loaded, the JVM's own uses
 * of those signals still work: implicit null checks in JIT-compiled code become
 * NullPointerExceptions, stack banging on the guard pages a StackOverflowError, and kernels keep
 * running between them. Exits 0 when all held; a crash exits otherwise.
 */
public final class SignalChainChild {
    private static Object sink;

    public static void main(String[] args) {
        String d = Kernels.description();
        System.out.println(d);
        if (!d.startsWith("NATIVE") || d.contains("no fault guard")) {
            System.out.println("FAILED: the native library with its fault guard is not in use");
            System.exit(1);
        }
        int npes = 0;
        int overflows = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(4096);
            MemorySegment dst = arena.allocate(8192);
            for (int i = 0; i < 200_000; i++) {
                Object o = (i % 1000 == 999) ? null : "x" + (i & 7);
                try {
                    sink = length(o);
                } catch (NullPointerException e) {
                    npes++;
                }
                if (i % 20_000 == 0) {
                    try {
                        recurse(0);
                    } catch (StackOverflowError e) {
                        overflows++;
                    }
                    Kernels.convert(Conversion.BF16_TO_F32, src, dst, 2048);
                }
            }
        }
        boolean ok = npes == 200 && overflows == 10;
        System.out.println(npes + " NullPointerExceptions, " + overflows + " StackOverflowErrors");
        System.out.println(ok ? "ALL CLEAN" : "FAILED");
        System.exit(ok ? 0 : 1);
    }

    /** Compiled with an implicit null check (a load through o that faults when o is null). */
    private static int length(Object o) {
        return ((String) o).length();
    }

    private static int recurse(int depth) {
        return recurse(depth + 1) + 1;
    }
}
