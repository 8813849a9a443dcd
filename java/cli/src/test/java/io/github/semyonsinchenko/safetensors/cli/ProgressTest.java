package io.github.semyonsinchenko.safetensors.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one progress reporter: a bar on a terminal, plain lines in a pipe, nothing when asked. */
class ProgressTest {
    private static String run(Progress.Mode mode, int steps) {
        StringWriter text = new StringWriter();
        try (Progress p = new Progress(new PrintWriter(text), mode, "timed", steps, Long::toString)) {
            for (int i = 1; i <= steps; i++) {
                p.update(i, i + " done");
            }
        }
        return text.toString();
    }

    @Test
    void aPipeGetsPlainLinesNeverCarriageReturns() {
        String out = run(Progress.Mode.LINES, 1000);
        assertFalse(out.contains("\r"), out);
        List<String> lines = out.lines().toList();
        // the first update, then nothing within 5 s, then the end: each a line of its own
        assertEquals(List.of("timed 1/1000  1 done", "timed 1000/1000  1000 done"), lines);
    }

    @Test
    void aTerminalGetsOneBarRedrawnInPlace() {
        String out = run(Progress.Mode.BAR, 3);
        assertTrue(out.startsWith("\rtimed [") && out.endsWith(System.lineSeparator()), out);
        assertEquals(1, out.chars().filter(c -> c == '\n').count(), out); // one line, redrawn with \r
        assertTrue(out.contains("100.0%  3/3  3 done"), out);
    }

    @Test
    void noProgressMeansNothing() {
        assertEquals("", run(Progress.Mode.OFF, 10));
        assertEquals(Progress.Mode.OFF, Progress.Mode.of(true));
    }

    @Test
    void workThatStopsEarlyStillEndsItsLine() {
        StringWriter text = new StringWriter();
        try (Progress p = new Progress(new PrintWriter(text), Progress.Mode.LINES, "load", 10, Long::toString)) {
            p.update(3, "");
            p.update(4, "");
        }
        assertEquals(List.of("load 3/10", "load 4/10"), text.toString().lines().toList());
    }

    @Test
    void aTestJvmIsNotATerminal() {
        // surefire's forked JVM writes to pipes: the default is lines, never a bar
        assertEquals(Progress.Mode.LINES, Progress.Mode.of(false));
    }
}
