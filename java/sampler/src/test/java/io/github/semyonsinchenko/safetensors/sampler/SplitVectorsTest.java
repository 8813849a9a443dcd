package io.github.semyonsinchenko.safetensors.sampler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Spec Appendix A: hashes, buckets, splits and f32 thresholds produced by the reference toolchain. */
class SplitVectorsTest {

    @ParameterizedTest
    @CsvSource({
        "0, 0, 0, 76be999e3e25b2a0, 536, TRAIN",
        "0, 1, 123, b610fc88ae7deb47, 471, TRAIN",
        "3, 987654, 123, adb6579ad2dda04a, 266, TRAIN",
        "1, 4294967295, 18446744073709551615, 7ca24e5120cfc68c, 532, TRAIN",
        "2, 42, 7, 537341251eda5971, 745, TRAIN",
        "0, 0, 123, 42ac8d019e5f39b6, 142, TRAIN",
        "5, 100, 42, 49b4f0312b3da727, 927, TEST",
        "7, 123456789, 123, 303929eca6a652a5, 981, TEST",
        "4294967295, 0, 1, 9a1a01514842fb38, 192, TRAIN",
        "0, 2473, 123, 3c8df6bd439a5710, 800, VAL",
        "0, 1758, 123, 9d67ef2b88df3bb3, 899, VAL",
        "0, 1640, 123, f1694a18b28a157c, 900, VAL",
        "0, 1442, 123, 85825c5dc79a0a7d, 901, TEST",
    })
    void appendixAHashes(long task, long anchor, String splitSeed, String hex, int bucket, Split split) {
        int t = (int) task;
        int a = (int) anchor;
        long seed = Long.parseUnsignedLong(splitSeed);
        assertEquals(Long.parseUnsignedLong(hex, 16), SipHash13.hashSplitKey(t, a, seed));
        assertEquals(bucket, Split.bucket(t, a, seed));
        assertEquals(split, Split.assign(t, a, seed, 0.8f, 0.1f));
    }

    @Test
    void messageBytesAndEmptyMessage() {
        byte[] msg = {0x03, 0, 0, 0, 0x06, 0x12, 0x0f, 0, 0x7b, 0, 0, 0, 0, 0, 0, 0};
        assertEquals(SipHash13.hashSplitKey(3, 987654, 123), SipHash13.hash(msg));
        assertEquals(Long.parseUnsignedLong("d1fba762150c532c", 16), SipHash13.hash(new byte[0]));
    }

    @ParameterizedTest
    @CsvSource({
        "0.8, 0.1, 800, 101, 99",
        "0.7, 0.15, 700, 150, 150",
        "0.9, 0.05, 900, 50, 50",
        "0.6, 0.2, 600, 200, 200",
        "0.5, 0.25, 500, 250, 250",
        "0.8, 0.15, 800, 151, 49",
    })
    void f32Thresholds(float train, float val, int nTrain, int nVal, int nTest) {
        int[] counts = new int[3];
        for (int b = 0; b < 1000; b++) {
            counts[Split.ofBucket(b, train, val).ordinal()]++;
        }
        assertEquals(nTrain, counts[0]);
        assertEquals(nVal, counts[1]);
        assertEquals(nTest, counts[2]);
    }

    @Test
    void defaultThresholdBits() {
        assertEquals(0x44610001, Float.floatToIntBits((0.8f + 0.1f) * 1000.0f));
    }
}
