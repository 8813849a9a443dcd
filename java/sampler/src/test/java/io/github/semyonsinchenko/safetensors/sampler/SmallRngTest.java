package io.github.semyonsinchenko.safetensors.sampler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Spec Appendix A RNG vectors (xoshiro256++ and rand's range, shuffle and batch-draw order). */
class SmallRngTest {

    private static void assertNext(SmallRng rng, String... unsigned) {
        for (String u : unsigned) {
            assertEquals(Long.parseUnsignedLong(u), rng.nextLong());
        }
    }

    @Test
    void publishedXoshiroVectorFromSeedZero() {
        assertNext(new SmallRng(0), "5987356902031041503", "7051070477665621255", "6633766593972829180");
    }

    @Test
    void seededStreams() {
        assertNext(new SmallRng(42), "15021278609987233951", "5881210131331364753", "18149643915985481100",
                "12933668939759105464");
        assertNext(new SmallRng(43), "3100045952314471549", "11026607114451017541", "16162881510996218068",
                "17432497639798234639");
        assertNext(new SmallRng(1042), "12653880532303236817", "6864692197645972778", "16148039190740366445",
                "15209910746454220237");
    }

    @Test
    void below() {
        SmallRng rng = new SmallRng(42);
        long[] three = new long[5];
        for (int i = 0; i < 5; i++) {
            three[i] = rng.below(3);
        }
        assertArrayEquals(new long[] {2, 0, 2, 2, 2}, three);
        rng.seed(42);
        long[] thousand = new long[5];
        for (int i = 0; i < 5; i++) {
            thousand[i] = rng.below(1000);
        }
        assertArrayEquals(new long[] {814, 318, 983, 701, 793}, thousand);
        rng.seed(7);
        long[] big = new long[5];
        for (int i = 0; i < 5; i++) {
            big[i] = rng.below(4_000_000_000L);
        }
        assertArrayEquals(new long[] {221441745, 2870304513L, 3854638087L, 2895628380L, 3929290604L}, big);
        assertNext(rng, "2107378874292048441");
    }

    @Test
    void batchDrawOrder() {
        SmallRng rng = new SmallRng(42);
        assertEquals(1, rng.below(2));
        long[] picks = new long[4];
        for (int i = 0; i < 4; i++) {
            picks[i] = rng.below(10);
        }
        assertArrayEquals(new long[] {3, 9, 7, 7}, picks);
        assertNext(rng, "10848501901068131965", "2312344417745909078", "11162538943635311430",
                "3831705504650218695");
    }

    @Test
    void shuffle() {
        SmallRng rng = new SmallRng(1);
        int[] a = IntStream.range(0, 20).toArray();
        rng.shuffle(a, 0, 20);
        assertArrayEquals(new int[] {13, 9, 8, 17, 6, 0, 12, 7, 16, 11, 15, 2, 19, 4, 18, 14, 10, 1, 5, 3}, a);
        assertNext(rng, "13765271635752736470");

        rng.seed(99);
        int[] b = {-1, 0, 1, 2, 3, 4, -1};
        rng.shuffle(b, 1, 5);
        assertArrayEquals(new int[] {-1, 0, 1, 3, 4, 2, -1}, b);
        assertNext(rng, "14754955171507859974");
    }

    @Test
    void shuffleOfOneOrNoneDrawsNothing() {
        SmallRng rng = new SmallRng(5);
        int[] one = {7};
        rng.shuffle(one, 0, 1);
        rng.shuffle(one, 0, 0);
        assertEquals(new SmallRng(5).nextLong(), rng.nextLong());
    }
}
