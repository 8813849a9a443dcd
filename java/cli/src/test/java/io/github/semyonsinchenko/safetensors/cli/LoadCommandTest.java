package io.github.semyonsinchenko.safetensors.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
    void aMisspeltLoaderPropertyIsAUsageErrorNamingTheClosestKnob() throws IOException {
        String dir = checkpoint().toUri().toString();
        System.setProperty("safetensors.loader.chunkByte", "1000");
        try {
            CliTest.Result r = CliTest.run("load", dir);
            assertEquals(SafetensorsCli.EXIT_USAGE, r.exit(), r.err());
            assertTrue(r.err().contains("'chunkByte'") && r.err().contains("did you mean 'chunkBytes'"), r.err());
            assertFalse(r.err().contains("internal error"), r.err());
        } finally {
            System.clearProperty("safetensors.loader.chunkByte");
        }
    }

    /** An HF index of {@code map} (tensor to shard) with {@code total} as metadata.total_size. */
    private static Path index(Path dir, Map<String, String> map, long total) throws IOException {
        StringBuilder json = new StringBuilder("{\n  \"metadata\": {\"total_size\": " + total + "},\n  \"weight_map\": {");
        String sep = "\n";
        for (var e : map.entrySet()) {
            json.append(sep).append("    \"").append(e.getKey()).append("\": \"").append(e.getValue()).append('"');
            sep = ",\n";
        }
        return Files.writeString(dir.resolve("model.safetensors.index.json"), json.append("\n  }\n}\n"));
    }

    /** Every tensor of the checkpoint's shards to its shard's file name, and their total bytes. */
    private static long weightMap(Path dir, Map<String, String> out) throws IOException {
        long total = 0;
        for (String shard : List.of("model-0.safetensors", "model-1.safetensors")) {
            try (SafetensorsFile f = SafetensorsFile.open(dir.resolve(shard))) {
                for (var t : f) {
                    out.put(t.name(), shard);
                }
                total += f.header().dataSize();
            }
        }
        return total;
    }

    private static void assertRefused(Path index, String... parts) {
        CliTest.Result r = CliTest.run("load", index.toUri().toString(), "--no-progress");
        assertEquals(SafetensorsCli.EXIT_INVALID, r.exit(), r.out() + r.err());
        assertFalse(r.out().contains("verified"), r.out());
        assertTrue(r.err().startsWith("error: ") && r.err().contains("model.safetensors.index.json: "), r.err());
        for (String p : parts) {
            assertTrue(r.err().contains(p), "\"" + p + "\" in " + r.err());
        }
    }

    @Test
    void anIndexThatDisagreesWithItsShardsFailsTheLoadNamingTheTensorAndTheShards() throws IOException {
        Path dir = checkpoint();
        Map<String, String> good = new LinkedHashMap<>();
        long total = weightMap(dir, good);
        CliTest.Result ok = CliTest.run("load", index(dir, good, total).toUri().toString(), "--no-progress");
        assertEquals(0, ok.exit(), ok.err());
        assertTrue(ok.out().contains("loaded 50 tensors") && ok.out().contains("verified: every tensor once"), ok.out());

        Map<String, String> ghost = new LinkedHashMap<>(good);
        ghost.put("lm_head.weight", "model-0.safetensors");
        assertRefused(index(dir, ghost, total), "tensor \"lm_head.weight\": the index lists it in model-0.safetensors,"
                + " which does not hold it");

        Map<String, String> wrong = new LinkedHashMap<>();
        good.forEach((name, shard) -> wrong.put(name, "model-0.safetensors"));
        assertRefused(index(dir, wrong, total), "the index lists it in model-0.safetensors, but it is in"
                + " model-1.safetensors");

        Map<String, String> unlisted = new LinkedHashMap<>(good);
        unlisted.remove("w1.7");
        assertRefused(index(dir, unlisted, total), "tensor \"w1.7\": model-1.safetensors holds it, but the index"
                + " does not list it");

        assertRefused(index(dir, good, total + 2), "metadata.total_size " + (total + 2) + " is not the " + total
                + " bytes of tensors");

        Path twice = index(dir, good, total);
        Files.writeString(twice, Files.readString(twice).replace("\"w1.3\": \"model-1.safetensors\"",
                "\"w1.3\": \"model-1.safetensors\",\n    \"w1.3\": \"model-0.safetensors\""));
        assertRefused(twice, "tensor \"w1.3\": weight_map lists it twice: in model-1.safetensors at line ",
                "and in model-0.safetensors at line ");

        Path broken = index(dir, good, total);
        String json = Files.readString(broken);
        Files.writeString(broken, json.substring(0, json.length() / 2));
        assertRefused(broken, "invalid JSON at line ", "the JSON ends inside an unclosed object, array or string");

        // A shard that also holds a tensor of the other one: it would be handed out twice.
        try (SafetensorsFile zero = SafetensorsFile.open(dir.resolve("model-0.safetensors"));
                SafetensorsFile one = SafetensorsFile.open(dir.resolve("model-1.safetensors"))) {
            SafetensorsWriter w = new SafetensorsWriter();
            for (var t : one) {
                w.add(t.name(), t.dtype(), t.shape(), t.data());
            }
            var dup = zero.tensor("w0.4");
            w.add("w0.4", dup.dtype(), dup.shape(), dup.data());
            w.write(dir.resolve("model-1b.safetensors"));
        }
        Files.move(dir.resolve("model-1b.safetensors"), dir.resolve("model-1.safetensors"),
                StandardCopyOption.REPLACE_EXISTING);
        Map<String, String> after = new LinkedHashMap<>();
        long totalAfter = weightMap(dir, after);
        after.put("w0.4", "model-0.safetensors");
        assertRefused(index(dir, after, totalAfter), "tensor \"w0.4\": model-0.safetensors and model-1.safetensors"
                + " both hold it");
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
