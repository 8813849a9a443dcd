package io.github.semyonsinchenko.safetensors.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code load}: the chunked loader from the command line, and the demo's loader step. */
class LoadCommandTest {
    private static final Pattern DIGEST = Pattern.compile("digest ([0-9a-f]{16})");
    private static final Pattern REQUESTS = Pattern.compile("in (\\d+) data requests");

    @TempDir
    Path tmp;

    private Path checkpoint() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("ckpt"));
        Random rnd = new Random(5);
        for (int f = 0; f < 2; f++) {
            SafetensorsWriter w = new SafetensorsWriter();
            for (int i = 0; i < 25; i++) {
                short[] v = new short[1 + rnd.nextInt(30_000)];
                for (int j = 0; j < v.length; j++) {
                    v[j] = (short) rnd.nextInt();
                }
                w.add("w" + f + "." + i, i % 2 == 0 ? Dtype.BF16 : Dtype.I16, new long[] {v.length}, v);
            }
            w.write(dir.resolve("model-" + f + ".safetensors"));
        }
        return dir;
    }

    private static long digest(String out) {
        Matcher m = DIGEST.matcher(out);
        assertTrue(m.find(), out);
        return Long.parseUnsignedLong(m.group(1), 16);
    }

    private static int requests(String out) {
        Matcher m = REQUESTS.matcher(out);
        assertTrue(m.find(), out);
        return Integer.parseInt(m.group(1));
    }

    @Test
    void loadVerifiesAndRanksAddUpToTheWhole() throws IOException {
        String dir = checkpoint().toUri().toString();
        CliTest.Result whole = CliTest.run("load", dir, "--chunk-mb", "1", "--no-progress");
        assertEquals(0, whole.exit(), whole.out() + whole.err());
        assertTrue(whole.out().contains("loaded 50 tensors"), whole.out());
        assertTrue(whole.out().contains("verified: every tensor once"), whole.out());
        CliTest.Result legacy = CliTest.run("load", dir, "--legacy", "--no-progress");
        assertEquals(0, legacy.exit(), legacy.err());
        assertEquals(digest(whole.out()), digest(legacy.out()), "same bytes either way");
        assertEquals(50, requests(legacy.out()));
        assertTrue(requests(whole.out()) < 10, whole.out());

        long sum = 0;
        for (int rank = 0; rank < 3; rank++) {
            CliTest.Result r = CliTest.run("load", dir, "--chunk-mb", "1", "--world-size", "3", "--rank",
                    Integer.toString(rank));
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.err().contains("MB/s"), "progress line: " + r.err());
            sum += digest(r.out());
        }
        assertEquals(digest(whole.out()), sum, "the ranks' digests add up to the single-rank digest");

        CliTest.Result f32 = CliTest.run("load", dir, "--to", "F32", "--no-progress");
        assertEquals(0, f32.exit(), f32.err());
        assertNotEquals(digest(whole.out()), digest(f32.out()), "BF16 tensors came out as F32");
    }

    private static long handedOut(String out) {
        Matcher m = Pattern.compile("handed out \\((\\d+) bytes\\)").matcher(out);
        assertTrue(m.find(), out);
        return Long.parseLong(m.group(1));
    }

    @Test
    void selectedTensorsSlicesAndTensorParallelBlocks() throws IOException {
        String dir = checkpoint().toUri().toString();
        CliTest.Result layer0 = CliTest.run("load", dir, "--tensors", "w0.*", "--no-progress");
        assertEquals(0, layer0.exit(), layer0.out() + layer0.err());
        assertTrue(layer0.out().contains("loaded 25 tensors"), layer0.out());
        CliTest.Result heads = CliTest.run("load", dir, "--tensors", "w1.1?", "--slice", "0:10", "--no-progress");
        assertEquals(0, heads.exit(), heads.out() + heads.err());
        assertTrue(heads.out().contains("loaded 10 tensors"), heads.out());
        assertEquals(10 * 10 * 2, handedOut(heads.out()), "the first 10 elements of 10 tensors of 2 bytes");

        // A 2-D checkpoint: two ranks' column blocks add up to the whole, each reads about half.
        Path mats = Files.createDirectories(tmp.resolve("mats"));
        SafetensorsWriter w = new SafetensorsWriter();
        Random rnd = new Random(9);
        long whole = 0;
        for (int i = 0; i < 6; i++) {
            byte[] b = new byte[(64 + i) * 256 * 2];
            rnd.nextBytes(b);
            w.add("layer." + i + ".weight", Dtype.BF16, new long[] {64 + i, 256}, b);
            w.add("layer." + i + ".norm", Dtype.F32, new long[] {4}, new byte[16]);
            whole += b.length;
        }
        w.write(mats.resolve("m.safetensors"));
        long sum = 0;
        for (int rank = 0; rank < 2; rank++) {
            CliTest.Result r = CliTest.run("load", mats.toUri().toString(), "--tensor-parallel", "--world-size", "2",
                    "--rank", Integer.toString(rank), "--no-progress");
            assertEquals(0, r.exit(), r.out() + r.err());
            assertTrue(r.out().contains("(tensor parallel)"), r.out());
            assertTrue(r.out().contains("loaded 12 tensors"), r.out());
            sum += handedOut(r.out()) - 6 * 16; // the norms are whole on each rank
        }
        assertEquals(whole, sum, "the ranks' blocks of the weights add up to the weights");
        CliTest.Result bad = CliTest.run("load", dir, "--slice", "0:x");
        assertEquals(SafetensorsCli.EXIT_USAGE, bad.exit());
        assertTrue(bad.err().contains("--slice 0:x"), bad.err());
        CliTest.Result noTp = CliTest.run("load", dir, "--row-parallel", "*.o_proj.weight");
        assertEquals(SafetensorsCli.EXIT_USAGE, noTp.exit());
    }

    @Test
    void badArgumentsAndMissingFilesAreReported() throws IOException {
        String dir = checkpoint().toUri().toString();
        CliTest.Result badRank = CliTest.run("load", dir, "--world-size", "2", "--rank", "2");
        assertEquals(SafetensorsCli.EXIT_USAGE, badRank.exit());
        assertTrue(badRank.err().contains("--rank"), badRank.err());
        CliTest.Result missing = CliTest.run("load", tmp.resolve("nothing.safetensors").toUri().toString());
        assertEquals(SafetensorsCli.EXIT_INVALID, missing.exit());
        assertTrue(missing.err().contains("nothing.safetensors"), missing.err());
    }

    @Test
    void theDemoComparesChunkedAndLegacyLoads() {
        CliTest.Result r = CliTest.run("demo", "--size-mb", "4", "--reps", "1");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("[loader]"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("\\s+chunked\\s+\\d+\\s+\\d+ .* 11 of 11")), r.out());
        // Legacy: 10 non-empty tensors, one request each, plus the header read.
        assertTrue(r.out().lines().anyMatch(l -> l.matches("\\s+legacy\\s+11\\s+11 .* 11 of 11")), r.out());
    }
}
