package io.github.semyonsinchenko.safetensors.sampler.db;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The reference's float layout (spec §3 examples and the float printer's rules). */
class ShortestDecimalTest {
    @Test
    void layoutsLikeTheReference() {
        assertEquals("1.0", MetadataJsonWriter.shortestDecimal(1.0));
        assertEquals("0.0", MetadataJsonWriter.shortestDecimal(0.0));
        assertEquals("-0.0", MetadataJsonWriter.shortestDecimal(-0.0));
        assertEquals("1700000000000000.0", MetadataJsonWriter.shortestDecimal(1700000000000000.0));
        assertEquals("1e22", MetadataJsonWriter.shortestDecimal(1e22));
        assertEquals("1e16", MetadataJsonWriter.shortestDecimal(1e16));
        assertEquals("1.5e17", MetadataJsonWriter.shortestDecimal(1.5e17));
        assertEquals("7.4", MetadataJsonWriter.shortestDecimal(7.4));
        assertEquals("-16.68", MetadataJsonWriter.shortestDecimal(-16.68));
        assertEquals("0.001234", MetadataJsonWriter.shortestDecimal(0.001234));
        assertEquals("0.0001", MetadataJsonWriter.shortestDecimal(1e-4));
        assertEquals("0.00001", MetadataJsonWriter.shortestDecimal(1e-5));
        assertEquals("1e-6", MetadataJsonWriter.shortestDecimal(1e-6));
        assertEquals("1.2345e-7", MetadataJsonWriter.shortestDecimal(1.2345e-7));
        assertEquals("0.30000000000000004", MetadataJsonWriter.shortestDecimal(0.1 + 0.2));
    }
}
