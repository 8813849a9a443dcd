package io.github.semyonsinchenko.safetensors.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The choice of path, tested on {@link Kernels#choose} directly with stand-in attempts. */
class KernelSelectionTest {
    static final Backend FAKE_NATIVE = PathSelection.backend(Implementation.SCALAR); // any backend will do as a token
    static final Backend FAKE_VECTOR = PathSelection.backend(Implementation.VECTOR);

    static Supplier<PathSelection.Attempt> ok(Backend b) {
        return () -> PathSelection.Attempt.ok(b);
    }

    static Supplier<PathSelection.Attempt> failed(String why, boolean serious) {
        return () -> PathSelection.Attempt.failed(why, serious);
    }

    static Supplier<PathSelection.Attempt> mustNotRun() {
        return () -> {
            throw new AssertionError("this path must not even be tried");
        };
    }

    @Test
    void autoPrefersNativeThenVectorThenScalar() {
        for (String auto : new String[] {null, "", "  ", "auto", "AUTO"}) {
            PathSelection.Choice c = PathSelection.choose(auto, ok(FAKE_NATIVE), mustNotRun());
            assertSame(FAKE_NATIVE, c.backend());
            assertTrue(c.notes().isEmpty());
            assertFalse(c.warn());
        }
        PathSelection.Choice v = PathSelection.choose(null, failed("no native kernels packaged for linux-riscv64", false),
                ok(FAKE_VECTOR));
        assertSame(FAKE_VECTOR, v.backend());
        assertEquals("native kernels unavailable: no native kernels packaged for linux-riscv64", v.notes().getFirst());
        assertFalse(v.warn(), "a platform without a packaged library is not worth a warning");

        PathSelection.Choice s = PathSelection.choose("auto", failed("native access is denied", true),
                failed("the module jdk.incubator.vector is not in the boot layer", false));
        assertEquals(Implementation.SCALAR, s.backend().implementation());
        assertEquals(2, s.notes().size());
        assertTrue(s.warn(), "a library that exists but cannot load is a warning");
    }

    @Test
    void forcedPathsAreHonouredAndOthersNotTried() {
        assertSame(FAKE_NATIVE, PathSelection.choose("native", ok(FAKE_NATIVE), mustNotRun()).backend());
        assertSame(FAKE_VECTOR, PathSelection.choose(" Vector ", mustNotRun(), ok(FAKE_VECTOR)).backend());
        PathSelection.Choice s = PathSelection.choose("scalar", mustNotRun(), mustNotRun());
        assertEquals(Implementation.SCALAR, s.backend().implementation());
        assertTrue(s.notes().getFirst().contains("forced by -Dsafetensors.kernels=scalar"));
    }

    @Test
    void forcedButUnavailableFailsOnEveryUseWithTheReason() {
        PathSelection.Choice c = PathSelection.choose("native", failed("no native kernels packaged for linux-riscv64", false),
                mustNotRun());
        assertTrue(c.warn());
        Backend b = c.backend();
        IllegalStateException e = assertThrows(IllegalStateException.class, b::implementation);
        assertEquals("-Dsafetensors.kernels=native forces the native kernels, but they cannot run: no native kernels"
                + " packaged for linux-riscv64", e.getMessage());
        // Even a call with nothing to do says so, before any argument check.
        e = assertThrows(IllegalStateException.class, () -> Kernels.convert(b, Conversion.BF16_TO_F32,
                MemorySegment.NULL, MemorySegment.NULL, 0));
        assertTrue(e.getMessage().contains("cannot run"));
        assertThrows(IllegalStateException.class, () -> Kernels.gather(b, MemorySegment.NULL, 0, MemorySegment.NULL,
                IndexType.U32, MemorySegment.NULL));

        Backend v = PathSelection.choose("vector", mustNotRun(), failed("the module jdk.incubator.vector is not in the"
                + " boot layer", false)).backend();
        e = assertThrows(IllegalStateException.class, v::implementation);
        assertTrue(e.getMessage().contains("forces the vector kernels"), e.getMessage());
        assertTrue(e.getMessage().contains("jdk.incubator.vector"), e.getMessage());
    }

    @Test
    void unknownValuesAreAnErrorNotASilentDefault() {
        Backend b = PathSelection.choose("avx512", mustNotRun(), mustNotRun()).backend();
        IllegalStateException e = assertThrows(IllegalStateException.class, b::implementation);
        assertEquals("-Dsafetensors.kernels=avx512 is not one of native, vector, scalar, auto", e.getMessage());
    }

    /** This test JVM has the library (the build packages it) and runs without the property. */
    @Test
    void thisJvmRunsNative() {
        assertEquals(null, System.getProperty(Kernels.PATH_PROPERTY));
        assertEquals(Implementation.NATIVE, Kernels.implementation());
        assertTrue(Kernels.description().startsWith("NATIVE (isa "), Kernels.description());
        assertTrue(Kernels.nativeIsa().isPresent());
        assertTrue(Kernels.nativeVersion().isPresent());
        assertTrue(Files.isRegularFile(Kernels.nativeLibraryPath().orElseThrow()));
        assertTrue(Kernels.nativeUnavailableReason().isEmpty());
    }

    @Test
    void isaSwitching() {
        assertTrue(NativeBackend.isaSupported("scalar"));
        assertFalse(NativeBackend.isaSupported("neon-on-x86"));
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                () -> NativeBackend.selectIsa("no-such-level"));
        assertTrue(e.getMessage().contains("st_select_isa(\"no-such-level\") returned ST_ERR_UNSUPPORTED"),
                e.getMessage());
        String before = Kernels.nativeIsa().orElseThrow();
        try {
            NativeBackend.selectIsa("scalar");
            assertEquals("scalar", Kernels.nativeIsa().orElseThrow());
        } finally {
            NativeBackend.selectIsa(before);
        }
        assertEquals(before, Kernels.nativeIsa().orElseThrow());
    }
}
