package io.github.semyonsinchenko.safetensors.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ConversionLookupTest {

    @Test
    void everyConversionIsFoundByItsDtypesAndRounding() {
        for (Conversion c : Conversion.values()) {
            boolean trunc = c.name().endsWith("_TRUNC");
            assertEquals(Optional.of(c), Conversion.of(c.source(), c.target(), trunc), c.name());
        }
    }

    @Test
    void pairsWithoutASingleKernelAreEmpty() {
        assertTrue(Conversion.of(Dtype.F64, Dtype.F16).isEmpty(), "F64 -> F16 would round twice");
        assertTrue(Conversion.of(Dtype.BF16, Dtype.F64).isEmpty(), "two exact steps, through F32");
        assertTrue(Conversion.of(Dtype.F4, Dtype.F32).isEmpty(), "no sub-byte kernels");
        assertTrue(Conversion.of(Dtype.F16, Dtype.F16).isEmpty());
        assertTrue(Conversion.of(Dtype.BF16, Dtype.F16, true).isEmpty(), "truncation exists for F32 sources only");
        assertEquals(Optional.of(Conversion.F32_TO_BF16_RNE), Conversion.of(Dtype.F32, Dtype.BF16));
        assertEquals(Optional.of(Conversion.U64_TO_F32), Conversion.toF32(Dtype.U64));
        assertEquals(Optional.of(Conversion.F8_E4M3_TO_F32), Conversion.toF32(Dtype.F8_E4M3));
        assertEquals(Optional.of(Conversion.F32_TO_F64), Conversion.of(Dtype.F32, Dtype.F64));
    }

    @Test
    void exactWideningsToF32AreThoseOfTheNarrowDtypes() {
        Set<Dtype> exact = EnumSet.of(Dtype.F16, Dtype.BF16, Dtype.F8_E4M3, Dtype.F8_E5M2, Dtype.F8_E8M0,
                Dtype.F8_E4M3FNUZ, Dtype.F8_E5M2FNUZ, Dtype.I8, Dtype.U8, Dtype.I16, Dtype.U16);
        for (Dtype d : Dtype.values()) {
            assertEquals(exact.contains(d), Conversion.exactToF32(d).isPresent(), d.name());
            Conversion.exactToF32(d).ifPresent(c -> assertEquals(Optional.of(c), Conversion.toF32(d)));
        }
        assertTrue(Conversion.toF32(Dtype.I32).isPresent() && Conversion.exactToF32(Dtype.I32).isEmpty(), "rounds");
    }

    @Test
    void theFloatingPointDtypesAreTheFloats() {
        Set<Dtype> floats = EnumSet.of(Dtype.F4, Dtype.F6_E2M3, Dtype.F6_E3M2, Dtype.F8_E5M2, Dtype.F8_E4M3,
                Dtype.F8_E8M0, Dtype.F8_E4M3FNUZ, Dtype.F8_E5M2FNUZ, Dtype.F16, Dtype.BF16, Dtype.F32, Dtype.F64);
        for (Dtype d : Dtype.values()) {
            assertEquals(floats.contains(d), d.isFloatingPoint(), d.name());
        }
    }
}
