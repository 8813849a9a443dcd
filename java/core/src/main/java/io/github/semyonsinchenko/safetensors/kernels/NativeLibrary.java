package io.github.semyonsinchenko.safetensors.kernels;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import java.util.Optional;

/**
 * Finds and loads {@code libsafetensors_native} once. Loading may fail (no library for this
 * platform, native access denied, ABI mismatch); then {@link #INSTANCE} is empty, {@link #FAILURE}
 * says why, and {@link Kernels} logs that in its one line and uses a Java path. Only this package
 * touches the {@link Linker}; the kernels are bound in {@link NativeBackend}.
 *
 * <p>The library ships inside the core jar under
 * {@code io/github/semyonsinchenko/safetensors/native/<os>-<arch>/} and is copied to a
 * private temporary file before loading, so a Spark executor that only has the jar finds it. The
 * system property {@code safetensors.native.library} names a library file to load instead.
 */
final class NativeLibrary {
    static final int EXPECTED_ABI = 3;
    static final String LIBRARY_PROPERTY = "safetensors.native.library";
    private static final System.Logger LOG = System.getLogger("io.github.semyonsinchenko.safetensors.kernels");

    /**
     * Why {@link #INSTANCE} is empty ("no native kernels packaged for linux-riscv64", "native access
     * is denied ...", ...), or null when the library is loaded. Set before {@link #INSTANCE}.
     */
    private static String failure;
    /** True when the failure is only that this platform has no packaged library (not worth a warning). */
    private static boolean notPackaged;

    /** The loaded library, or empty when the Java path must be used. */
    static final Optional<NativeLibrary> INSTANCE = load();
    static final String FAILURE = failure;
    static final boolean NOT_PACKAGED = notPackaged;

    final Path file;
    final SymbolLookup symbols;
    final String version;
    private final MethodHandle stIsaName;

    private NativeLibrary(Path file, SymbolLookup symbols) throws Throwable {
        this.file = file;
        this.symbols = symbols;
        int abi = (int) downcall("st_abi_version", FunctionDescriptor.of(ValueLayout.JAVA_INT)).invokeExact();
        if (abi != EXPECTED_ABI) {
            throw new IllegalStateException("ABI " + abi + ", this jar needs ABI " + EXPECTED_ABI);
        }
        MethodHandle stVersion = downcall("st_version", FunctionDescriptor.of(ValueLayout.ADDRESS));
        this.version = cString((MemorySegment) stVersion.invokeExact());
        this.stIsaName = downcall("st_isa_name", FunctionDescriptor.of(ValueLayout.ADDRESS));
    }

    /** Binds {@code name}; fails if the symbol is missing. */
    MethodHandle downcall(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        MemorySegment symbol = symbols.find(name)
                .orElseThrow(() -> new IllegalStateException(file + " has no symbol " + name));
        return Linker.nativeLinker().downcallHandle(symbol, descriptor, options);
    }

    /** The instruction-set level the library dispatched to ("avx512bf16", "avx512", "avx2", "scalar" or "unsupported"). */
    String isaName() {
        try {
            return cString((MemorySegment) stIsaName.invokeExact());
        } catch (Throwable t) {
            throw new IllegalStateException("st_isa_name failed", t);
        }
    }

    static String cString(MemorySegment zeroLengthPointer) {
        // Native pointers come back with size 0; C strings from the library are short constants.
        return zeroLengthPointer.reinterpret(256).getString(0);
    }

    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osName = os.contains("linux") ? "linux" : os.contains("mac") ? "macos" : os.contains("win") ? "windows" : os;
        String archName = switch (arch) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        return osName + "-" + archName;
    }

    static String libraryFileName() {
        String os = platform();
        return os.startsWith("windows") ? "safetensors_native.dll"
                : os.startsWith("macos") ? "libsafetensors_native.dylib" : "libsafetensors_native.so";
    }

    private static Optional<NativeLibrary> load() {
        // Kernels logs the outcome once, together with the path it chose; here only DEBUG detail.
        try {
            Path file = locate();
            if (file == null) {
                failure = "no native kernels packaged for " + platform();
                notPackaged = true;
                return Optional.empty();
            }
            SymbolLookup symbols = SymbolLookup.libraryLookup(file, Arena.global());
            NativeLibrary lib = new NativeLibrary(file, symbols);
            LOG.log(System.Logger.Level.DEBUG, "safetensors-jvm: loaded native kernels {0} ({1}) from {2}",
                    lib.version, lib.isaName(), file);
            return Optional.of(lib);
        } catch (IllegalCallerException e) {
            failure = "native access is denied (" + e.getMessage() + "); start the JVM with"
                    + " --enable-native-access=ALL-UNNAMED to use the native kernels";
        } catch (Throwable t) {
            failure = "cannot load the native kernels (" + t + ")";
        }
        return Optional.empty();
    }

    /** The library file to load: the override property, else the packaged resource copied out. */
    private static Path locate() throws IOException {
        String override = System.getProperty(LIBRARY_PROPERTY);
        if (override != null && !override.isBlank()) {
            Path p = Path.of(override);
            if (!Files.isRegularFile(p)) {
                throw new IOException(LIBRARY_PROPERTY + "=" + override + " is not a file");
            }
            return p;
        }
        String resource = "/io/github/semyonsinchenko/safetensors/native/" + platform() + "/" + libraryFileName();
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                return null;
            }
            Path dir;
            try {
                dir = Files.createTempDirectory("safetensors-native-",
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (UnsupportedOperationException e) {
                dir = Files.createTempDirectory("safetensors-native-");
            }
            Path file = dir.resolve(libraryFileName());
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            // The mapping stays valid after unlink on POSIX; deleteOnExit covers the others.
            file.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            return file;
        }
    }
}
