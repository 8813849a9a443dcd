package io.github.semyonsinchenko.safetensors.format;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The header JSON must escape exactly as the reference writer (serde_json) does. */
class HeaderJsonEscapingTest {
    /**
     * safetensors 0.8.0, {@code safetensors.numpy.save({"a\x1f\U0001F600": np.array([7], np.uint8)},
     * metadata={"k": "\x0b\u00e9"})}: prefix and header (the last 0x07 is the data byte, dropped).
     */
    private static final String REFERENCE_HEX = "6000000000000000"
            + "7b225f5f6d657461646174615f5f223a7b226b223a225c7530303062c3a9227d2c22615c7530303166f09f9880"
            + "223a7b226474797065223a225538222c227368617065223a5b315d2c22646174615f6f666673657473223a5b30"
            + "2c315d7d7d20";

    @Test
    void controlCharactersAndSupplementaryCharactersMatchTheReference() throws SafetensorsException {
        Header h = Header.layout(Map.of("k", "\u000b\u00e9"),
                List.of(new Header.Entry("a\u001f\uD83D\uDE00", Dtype.U8, new long[] {1})), false, "test");
        assertEquals(REFERENCE_HEX, HexFormat.of().formatHex(h.toBytes()));
    }

    @Test
    void theEscapedHeaderParsesBackToTheSameNames() throws SafetensorsException {
        Header h = Header.layout(Map.of("k\n", "\u001f \uD83D\uDE00"),
                List.of(new Header.Entry("\u0001\"\\/\u007f\uFFFF\uD83D\uDE00", Dtype.F32, new long[] {2})),
                false, "test");
        byte[] bytes = h.toBytes();
        Header back = Header.parse(java.util.Arrays.copyOfRange(bytes, Header.PREFIX_BYTES, bytes.length), -1, "back");
        assertEquals(h.tensors(), back.tensors());
        assertEquals(h.metadata(), back.metadata());
    }
}
