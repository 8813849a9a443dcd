package io.github.semyonsinchenko.safetensors.options;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SequencedMap;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OptionsTest {
    static final Set<String> KNOWN = Set.of("path", "batch_size", "name_col", "generate_index");

    static Options of(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return Options.of("safetensors write", m);
    }

    @Test
    void aMisspeltNameNamesTheClosestValidOne() {
        OptionException e = assertThrows(OptionException.class,
                () -> of("path", "p", "bach_size", "8").requireKnown(KNOWN, n -> false));
        assertTrue(e.getMessage().contains("unknown safetensors write option 'bach_size'; did you mean 'batch_size'?"),
                e.getMessage());
        assertEquals("bach_size", e.option());
        assertNull(e.value());
        e = assertThrows(OptionException.class, () -> of("zzzzzz", "1").requireKnown(KNOWN, n -> false));
        assertTrue(!e.getMessage().contains("did you mean") && e.getMessage().contains("valid: batch_size"),
                e.getMessage());
        assertEquals(1, Options.distance("bach_size", "batch_size"));
    }

    @Test
    void namesAreCaseInsensitiveAndPassThroughIsTheCallersChoice() {
        Options o = of("PATH", "p", "Name_Col", "k", "fs.s3a.endpoint", "x", "__partition_columns", "[]");
        o.requireKnown(KNOWN, n -> n.contains(".") || n.startsWith("__"));
        assertTrue(o.has("path"));
        assertEquals("k", o.string("NAME_COL", null));
        assertThrows(OptionException.class, () -> o.requireKnown(KNOWN, n -> false));
    }

    @Test
    void booleansAreTrueOrFalseOnly() {
        assertTrue(of("generate_index", " TRUE ").bool("generate_index", false));
        assertFalse(of("generate_index", "false").bool("generate_index", true));
        assertTrue(of().bool("generate_index", true));
        for (String bad : new String[] {"yes", "1", "", "tru", "on"}) {
            OptionException e = assertThrows(OptionException.class, () -> of("generate_index", bad)
                    .bool("generate_index", false));
            assertEquals("safetensors write option 'generate_index' is '" + bad + "'; allowed: true, false (default)",
                    e.getMessage());
            assertEquals(bad, e.value());
        }
    }

    @Test
    void numbersAreWholeAndInRange() {
        assertEquals(64_000_000L, of("n", "64_000_000").longValue("n", 0, 0, Long.MAX_VALUE, "bytes"));
        assertEquals(7, of("n", " 7 ").intValue("n", 1, 1, 10, "rows"));
        assertEquals(3, of().intValue("n", 3, 1, 10, "rows"));
        for (String bad : new String[] {"0", "11", "1.5", "x", "_1", "1_", "", "99999999999999999999"}) {
            OptionException e = assertThrows(OptionException.class, () -> of("n", bad).intValue("n", 3, 1, 10, "rows"));
            assertTrue(e.getMessage().endsWith("allowed: a whole number of rows from 1 to 10 (default 3)"),
                    e.getMessage());
        }
        OptionException e = assertThrows(OptionException.class,
                () -> of("n", "-1").longValue("n", 0, 0, Long.MAX_VALUE, "bytes"));
        assertTrue(e.getMessage().endsWith("a whole number of bytes at least 0 (default 0)"), e.getMessage());
    }

    @Test
    void choicesAcceptTheirSpellingsInAnyCase() {
        SequencedMap<String, Integer> s = new LinkedHashMap<>();
        s.put("write", 1);
        s.put("drop", 2);
        s.put("pad", 3);
        assertEquals(3, of("tail", " PAD").choice("tail", 1, s));
        assertEquals(1, of().choice("tail", 1, s));
        OptionException e = assertThrows(OptionException.class, () -> of("tail", "trim").choice("tail", 1, s));
        assertEquals("safetensors write option 'tail' is 'trim'; allowed: write (default), drop, pad", e.getMessage());
    }

    @Test
    void durationsTakeAUnit() {
        assertEquals(Duration.ofMillis(250), of("d", "250ms").duration("d", Duration.ZERO));
        assertEquals(Duration.ofSeconds(90), of("d", "90S").duration("d", Duration.ZERO));
        assertEquals(Duration.ofMinutes(30), of("d", "30m").duration("d", Duration.ZERO));
        assertEquals(Duration.ofHours(12), of("d", "12h").duration("d", Duration.ZERO));
        assertEquals(Duration.ofDays(7), of("d", "7d").duration("d", Duration.ZERO));
        assertEquals(Duration.ofSeconds(5), of("d", "5").duration("d", Duration.ZERO));
        assertEquals(Duration.ofDays(1), of().duration("d", Duration.ofDays(1)));
        for (String bad : new String[] {"soon", "-5s", "", "5w", "ms"}) {
            OptionException e = assertThrows(OptionException.class, () -> of("d", bad).duration("d", Duration.ZERO));
            assertTrue(e.getMessage().endsWith("allowed: a duration such as 90s, 30m, 12h or 7d"), e.getMessage());
        }
    }
}
