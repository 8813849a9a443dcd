package io.github.semyonsinchenko.safetensors.preprocess.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The key map's two forms: rows indexed by key for keys that fill their range, else hashed. */
class KeyMapTest {
    @Test
    void denseKeysAreIndexedAndAnswerLikeTheHashTable() {
        Random random = new Random(7);
        long base = -1_000L;
        int n = 10_000;
        long[] rows = new long[n];
        for (int i = 0; i < n; i++) {
            rows[i] = random.nextInt(1 << 30);
        }
        // every key of [base, base + n) but every tenth: 90% of the range
        KeyMap direct = KeyMap.forKeys(n - n / 10, base + 1, base + n - 1);
        KeyMap hashed = new KeyMap(n - n / 10);
        for (int i = 1; i < n; i++) {
            if (i % 10 != 0) {
                direct.putLast(base + i, rows[i]);
                hashed.putLast(base + i, rows[i]);
            }
        }
        assertTrue(direct.direct());
        assertFalse(hashed.direct());
        assertEquals(hashed.size(), direct.size());
        for (long k = base - 5; k < base + n + 5; k++) {
            assertEquals(hashed.get(k), direct.get(k), "key " + k);
        }
        assertEquals(-1, direct.get(base + 10)); // a gap in the range
        assertEquals(-1, direct.get(Long.MIN_VALUE));
        assertEquals(-1, direct.get(Long.MAX_VALUE));
        assertThrows(IllegalStateException.class, () -> direct.putLast(base + n, 1)); // outside [min, max]
    }

    @Test
    void aDuplicateKeyKeepsItsLastRowWhenIndexed() {
        KeyMap m = KeyMap.forKeys(4, 10, 13);
        assertTrue(m.direct());
        m.putLast(10, 0); // row 0: the smallest row, stored as 1, not taken for empty
        m.putLast(11, 7);
        m.putLast(11, 3); // an earlier row never replaces a later one
        m.putLast(12, BuildContext.U32_LIMIT - 1); // the largest row a database can have
        assertEquals(3, m.size());
        assertEquals(0, m.get(10));
        assertEquals(7, m.get(11));
        assertEquals(BuildContext.U32_LIMIT - 1, m.get(12));
        assertEquals(-1, m.get(13));
    }

    @Test
    void sparseOrHugeRangesAreHashed() {
        assertFalse(KeyMap.forKeys(1_000, 0, 1_000_000_000L).direct()); // keys far apart
        assertFalse(KeyMap.forKeys(1_000, Long.MIN_VALUE, Long.MAX_VALUE).direct()); // the range overflows
        assertFalse(KeyMap.forKeys(1_000, 0, (1L << 62) - 1).direct()); // so would its bytes (4 x 2^62)
        // 2^29 keys would get a 12 GiB hash table, but no array of more than 2^30 ints
        assertTrue(KeyMap.indexable(1L << 29, 0, (1L << 30) - 1));
        assertFalse(KeyMap.indexable(1L << 29, 0, 1L << 30));
        assertFalse(KeyMap.indexable(1L << 29, 0, (3L << 30) - 1));
        assertFalse(KeyMap.forKeys(0, Long.MAX_VALUE, Long.MIN_VALUE).direct()); // no keys
        // at most the hash table's bytes: 1,000 keys take 2,048 slots of 12 bytes, so 6,144 ints
        assertTrue(KeyMap.forKeys(1_000, 0, 6_143).direct());
        assertFalse(KeyMap.forKeys(1_000, 0, 6_144).direct());
    }

    @Test
    void keyMapKeepsTheLastRowOfADuplicateKey() {
        KeyMap m = new KeyMap(1000);
        for (long k = 0; k < 1000; k++) {
            m.putLast(k * 1_000_003L - 500_000_000L, k); // negative and positive keys, spread over the slots
        }
        m.putLast(-500_000_000L, 7);
        m.putLast(-500_000_000L, 3); // an earlier row never replaces a later one
        assertEquals(1000, m.size());
        assertEquals(7, m.get(-500_000_000L));
        assertEquals(999, m.get(999 * 1_000_003L - 500_000_000L));
        assertEquals(-1, m.get(1));
        m.putLast(Long.MIN_VALUE + 1, BuildContext.U32_LIMIT - 1); // the largest row a database can have
        assertEquals(BuildContext.U32_LIMIT - 1, m.get(Long.MIN_VALUE + 1));
        assertThrows(IllegalStateException.class, () -> {
            KeyMap small = new KeyMap(2);
            for (long k = 0; k < 10; k++) {
                small.putLast(k, k);
            }
        });
    }

    @Test
    void anchorMapBytesCountTheSlotsAndTheTimes() {
        assertEquals(12L << 21, KeyMap.bytes(1_000_000)); // 2^21 slots keep a million keys at most half full
        assertEquals(12L << 21, PrimaryKeyMaps.anchorBytes(1_000_000, false));
        assertEquals((12L << 21) + 8_000_000, PrimaryKeyMaps.anchorBytes(1_000_000, true));
        assertEquals(Long.MAX_VALUE, KeyMap.bytes(1L << 31)); // more slots than a map can have
        assertEquals(Long.MAX_VALUE, PrimaryKeyMaps.anchorBytes(1L << 31, true));
    }
}
