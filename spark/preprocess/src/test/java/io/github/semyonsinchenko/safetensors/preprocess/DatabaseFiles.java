package io.github.semyonsinchenko.safetensors.preprocess;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/** Comparisons of database directories and files, for the tests of every stage. */
public final class DatabaseFiles {
    private DatabaseFiles() {}

    public static boolean allZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    /** Every file of {@code expected} against {@code actual}; embedding files only when {@code embeddings}. */
    public static void assertSameDatabase(Path expected, Path actual, boolean embeddings) throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(expected)) {
            files = walk.filter(Files::isRegularFile).map(expected::relativize).sorted().toList();
        }
        try (Stream<Path> walk = Files.walk(actual)) {
            List<Path> ours = walk.filter(Files::isRegularFile).map(actual::relativize).sorted().toList();
            assertEquals(files, ours, "the same file names");
        }
        for (Path f : files) {
            String name = f.toString();
            byte[] want = Files.readAllBytes(expected.resolve(f));
            byte[] got = Files.readAllBytes(actual.resolve(f));
            if (name.endsWith("embeddings.bin") && !embeddings) {
                continue;
            }
            if (name.equals(DatabaseLayout.GRAPH_FILE)) {
                assertSameGraph(want, got);
            } else if (!Arrays.equals(want, got)) {
                assertEquals(want.length, got.length, name + ": size");
                int i = Arrays.mismatch(want, got);
                throw new AssertionError(String.format("%s: first difference at byte %d of %d (expected %02x, got %02x)%s",
                        name, i, want.length, want[i], got[i], name.endsWith(".json")
                                ? "\nexpected: " + new String(want) + "\nactual: " + new String(got) : ""));
            }
        }
    }

    /** Exact header, row pointers and incoming lists; outgoing lists equal as multisets per row (Q9). */
    public static void assertSameGraph(byte[] want, byte[] got) {
        assertEquals(want.length, got.length, "graph.bin size");
        int[] w = ints(want);
        int[] g = ints(got);
        int n = w[0];
        int e = w[1];
        assertArrayEquals(Arrays.copyOf(w, 4 + n + 1), Arrays.copyOf(g, 4 + n + 1), "header and outgoing row_ptr");
        int colStart = 4 + n + 1;
        for (int r = 0; r < n; r++) {
            int[] wr = Arrays.copyOfRange(w, colStart + w[4 + r], colStart + w[4 + r + 1]);
            int[] gr = Arrays.copyOfRange(g, colStart + w[4 + r], colStart + w[4 + r + 1]);
            Arrays.sort(wr);
            Arrays.sort(gr);
            assertArrayEquals(wr, gr, "outgoing neighbours of row " + r + " (as a multiset)");
        }
        int incoming = colStart + e;
        assertArrayEquals(Arrays.copyOfRange(w, incoming, w.length), Arrays.copyOfRange(g, incoming, g.length),
                "incoming row_ptr and col_idx");
    }

    public static int[] ints(byte[] b) {
        int[] out = new int[b.length / 4];
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(out);
        return out;
    }
}
