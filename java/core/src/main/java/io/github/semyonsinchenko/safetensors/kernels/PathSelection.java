package io.github.semyonsinchenko.safetensors.kernels;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Chooses the one path every kernel call of this JVM runs (native library, Vector API or plain
 * Java), once, on first use, and logs the choice once; see {@link Kernels} for the order and the
 * system properties.
 */
final class PathSelection {
    private static final System.Logger LOG = System.getLogger("io.github.semyonsinchenko.safetensors.kernels");
    private static final String VECTOR_MODULE = "jdk.incubator.vector";

    private PathSelection() {}

    /** The chosen path; selected (and logged) on first use. */
    static Backend backend() {
        return Selected.BACKEND;
    }

    private static final class Selected {
        static final Backend BACKEND = selectAndLog();
    }

    /** The outcome of trying to set up one path: a backend, or why there is none. */
    record Attempt(Backend backend, String problem, boolean serious) {
        static Attempt ok(Backend b) {
            return new Attempt(b, null, false);
        }

        static Attempt failed(String problem, boolean serious) {
            return new Attempt(null, problem, serious);
        }
    }

    /** What {@link #choose} decided, with the notes worth logging. */
    record Choice(Backend backend, List<String> notes, boolean warn) {}

    /**
     * Chooses a path for {@code requested} (the value of {@value Kernels#PATH_PROPERTY}; null, blank or
     * {@code auto} means the best available). The attempts are only run when needed, so a forced
     * Java path never loads the native library.
     */
    static Choice choose(String requested, Supplier<Attempt> nativePath, Supplier<Attempt> vectorPath) {
        String r = requested == null ? "" : requested.trim().toLowerCase(Locale.ROOT);
        List<String> notes = new ArrayList<>();
        switch (r) {
            case "", "auto" -> {
                Attempt n = nativePath.get();
                if (n.backend() != null) {
                    return new Choice(n.backend(), notes, false);
                }
                notes.add("native kernels unavailable: " + n.problem());
                Attempt v = vectorPath.get();
                if (v.backend() != null) {
                    return new Choice(v.backend(), notes, n.serious());
                }
                notes.add("Vector API unavailable: " + v.problem());
                return new Choice(ScalarBackend.INSTANCE, notes, n.serious() || v.serious());
            }
            case "native", "vector" -> {
                Attempt a = r.equals("native") ? nativePath.get() : vectorPath.get();
                if (a.backend() != null) {
                    notes.add("forced by -D" + Kernels.PATH_PROPERTY + "=" + requested);
                    return new Choice(a.backend(), notes, false);
                }
                return new Choice(new UnavailableBackend("-D" + Kernels.PATH_PROPERTY + "=" + requested + " forces the "
                        + r + " kernels, but they cannot run: " + a.problem()), notes, true);
            }
            case "scalar" -> {
                notes.add("forced by -D" + Kernels.PATH_PROPERTY + "=" + requested);
                return new Choice(ScalarBackend.INSTANCE, notes, false);
            }
            default -> {
                return new Choice(new UnavailableBackend("-D" + Kernels.PATH_PROPERTY + "=" + requested
                        + " is not one of native, vector, scalar, auto"), notes, true);
            }
        }
    }

    private static Backend selectAndLog() {
        Choice c = choose(System.getProperty(Kernels.PATH_PROPERTY), PathSelection::attemptNative,
                PathSelection::attemptVector);
        StringBuilder line = new StringBuilder("safetensors-jvm kernels: ").append(c.backend().describe());
        for (String note : c.notes()) {
            line.append("; ").append(note);
        }
        // The expected outcome (native, chosen by default) is DEBUG; a fallback or a forced path is
        // INFO; a library that exists but cannot load, or a forced path that cannot run, is WARNING.
        System.Logger.Level level = c.warn() ? System.Logger.Level.WARNING
                : c.notes().isEmpty() ? System.Logger.Level.DEBUG : System.Logger.Level.INFO;
        LOG.log(level, line.toString());
        return c.backend();
    }

    static Attempt attemptNative() {
        if (NativeLibrary.INSTANCE.isEmpty()) {
            return Attempt.failed(NativeLibrary.FAILURE, !NativeLibrary.NOT_PACKAGED);
        }
        try {
            return Attempt.ok(NativeBackend.INSTANCE);
        } catch (Throwable t) {
            return Attempt.failed(rootMessage(t), true);
        }
    }

    static Attempt attemptVector() {
        return VectorHolder.ATTEMPT;
    }

    private static final class VectorHolder {
        static final Attempt ATTEMPT = loadVector();
    }

    /** Links {@link VectorBackend} only when its module is present, and only by name. */
    private static Attempt loadVector() {
        if (ModuleLayer.boot().findModule(VECTOR_MODULE).isEmpty()) {
            return Attempt.failed("the module " + VECTOR_MODULE + " is not in the boot layer (start the JVM with"
                    + " --add-modules=" + VECTOR_MODULE + " to use it)", false);
        }
        try {
            Class<?> k = Class.forName(PathSelection.class.getPackageName() + ".VectorBackend");
            return Attempt.ok((Backend) k.getDeclaredConstructor().newInstance());
        } catch (Throwable t) {
            return Attempt.failed(rootMessage(t), true);
        }
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.toString();
    }

    /**
     * Test hook: the backend of one path, whatever was selected.
     *
     * @throws IllegalStateException if that path cannot run here
     */
    static Backend backend(Implementation which) {
        Attempt a = switch (which) {
            case SCALAR -> Attempt.ok(ScalarBackend.INSTANCE);
            case VECTOR -> attemptVector();
            case NATIVE -> attemptNative();
        };
        if (a.backend() == null) {
            throw new IllegalStateException(which + " is unavailable: " + a.problem());
        }
        return a.backend();
    }
}
