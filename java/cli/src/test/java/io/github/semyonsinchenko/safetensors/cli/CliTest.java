package io.github.semyonsinchenko.safetensors.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CliTest {
    @TempDir
    Path tmp;

    record Result(int exit, String out, String err) {}

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = SafetensorsCli.newCommandLine()
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(args);
        return new Result(exit, out.toString(), err.toString());
    }

    /** A file with one tensor of most dtypes, a scalar, an empty tensor, packed F4 and ordered metadata. */
    private Path goodFile() throws IOException {
        Path file = tmp.resolve("good.safetensors");
        byte[] f4 = {0x12, 0x34, 0x56}; // 6 packed F4 elements
        new SafetensorsWriter()
                .metadata("format", "pt")
                .metadata("zeta", "metadata keeps file order, not alphabetical")
                .metadata("alpha", "ключ ✓")
                .add("weight", Dtype.F32, new long[] {2, 3}, new float[] {1, 2, 3, 4, 5, 6})
                .add("half", Dtype.F16, new long[] {4}, new short[] {0x3C00, 0x4000, (short) 0xC000, 0})
                .add("brain", Dtype.BF16, new long[] {2}, new short[] {0x3F80, 0x4000})
                .add("ids", Dtype.I64, new long[] {3}, new long[] {-1, 0, Long.MAX_VALUE})
                .add("u64", Dtype.U64, new long[] {1}, new long[] {-1})
                .add("f64", Dtype.F64, new long[] {1, 1, 2}, new double[] {Math.PI, -0.0})
                .add("i32", Dtype.I32, new long[] {2}, new int[] {7, -7})
                .add("c64", Dtype.C64, new long[] {1}, new float[] {1.5f, -2.5f})
                .add("mask", Dtype.BOOL, new long[] {3}, new byte[] {1, 0, 1})
                .add("pixels", Dtype.U8, new long[] {2, 2}, new byte[] {0, 1, (byte) 254, (byte) 255})
                .add("f8", Dtype.F8_E4M3, new long[] {2}, new byte[] {0x38, (byte) 0xB8})
                .add("f4", Dtype.F4, new long[] {2, 3}, f4)
                .add("scalar", Dtype.I64, new long[] {}, new long[] {42})
                .add("empty", Dtype.F32, new long[] {0, 5}, new float[0])
                .write(file);
        return file;
    }

    private Path write(String name, byte[] bytes) throws IOException {
        Path p = tmp.resolve(name);
        Files.write(p, bytes);
        return p;
    }

    /** 8-byte prefix + header JSON (space-padded to 8) + data. */
    static byte[] rawFile(String headerJson, int dataBytes) {
        byte[] json = headerJson.getBytes(StandardCharsets.UTF_8);
        int n = (json.length + 7) & ~7;
        ByteBuffer b = ByteBuffer.allocate(8 + n + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(n).put(json);
        while (b.position() < 8 + n) {
            b.put((byte) ' ');
        }
        return b.array();
    }

    // ------------------------------------------------------------------ usage

    @Test
    void noCommandIsAUsageError() {
        Result r = run();
        assertEquals(SafetensorsCli.EXIT_USAGE, r.exit());
        assertTrue(r.err().contains("missing command"), r.err());
    }

    @Test
    void unknownOptionIsAUsageError() {
        Result r = run("inspect", "--bogus", "x");
        assertEquals(SafetensorsCli.EXIT_USAGE, r.exit());
        assertTrue(r.err().contains("Unknown option"), r.err());
    }

    @Test
    void helpListsEveryCommandAndTheExitCodes() {
        Result r = run("--help");
        assertEquals(0, r.exit());
        for (String cmd : List.of("inspect", "verify", "export", "pack", "demo")) {
            assertTrue(r.out().contains(cmd), cmd);
        }
        assertTrue(r.out().contains("usage error"));
    }

    // ------------------------------------------------------------------ inspect

    @Test
    void inspectPrintsTheTableInOffsetOrderAndTheMetadata() throws IOException {
        Path file = goodFile();
        Result r = run("inspect", file.toString());
        assertEquals(0, r.exit(), r.err());
        Header h;
        try (SafetensorsFile f = SafetensorsFile.open(file)) {
            h = f.header();
        }
        assertTrue(r.out().contains("header length: " + Format.count(h.headerLength()) + " bytes"), r.out());
        assertTrue(r.out().contains("alpha = ключ ✓"), r.out());
        int last = -1;
        for (TensorInfo t : h.tensors()) {
            String row = t.name() + " ";
            int at = r.out().indexOf("  " + row);
            assertTrue(at > last, t.name() + " out of order in\n" + r.out());
            last = at;
            assertTrue(r.out().contains("[" + t.begin() + ", " + t.end() + "]"), t.name());
        }
        assertTrue(r.out().contains("F4  "), r.out());
    }

    @Test
    void inspectJsonIsMachineReadable() throws IOException {
        Path file = goodFile();
        Result r = run("inspect", "--json", file.toString());
        assertEquals(0, r.exit(), r.err());
        Map<?, ?> doc = (Map<?, ?>) Json.read(
                new ByteArrayInputStream(r.out().getBytes(StandardCharsets.UTF_8)), "stdout");
        try (SafetensorsFile f = SafetensorsFile.open(file)) {
            Header h = f.header();
            assertEquals(h.headerLength(), doc.get("header_length"));
            assertEquals(h.fileSize(), doc.get("file_size"));
            assertEquals(h.dataOffset(), doc.get("data_offset"));
            assertEquals(List.copyOf(h.metadata().entrySet()), List.copyOf(((Map<?, ?>) doc.get("metadata")).entrySet()));
            List<?> tensors = (List<?>) doc.get("tensors");
            assertEquals(h.size(), tensors.size());
            for (int i = 0; i < h.size(); i++) {
                TensorInfo t = h.tensors().get(i);
                Map<?, ?> j = (Map<?, ?>) tensors.get(i);
                assertEquals(t.name(), j.get("name"));
                assertEquals(t.dtype().name(), j.get("dtype"));
                assertEquals(Arrays.stream(t.shape()).boxed().toList(), j.get("shape"));
                assertEquals(List.of(t.begin(), t.end()), j.get("data_offsets"));
                assertEquals(t.byteSize(), j.get("bytes"));
            }
        }
    }

    @Test
    void inspectRejectsAnInvalidFileWithExit1AndTheRule() throws IOException {
        Path bad = write("trailing.safetensors",
                Arrays.copyOf(rawFile("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1), 100));
        Result r = run("inspect", bad.toString());
        assertEquals(SafetensorsCli.EXIT_INVALID, r.exit());
        assertTrue(r.err().contains(bad.toString()), r.err());
        assertTrue(r.err().contains("bytes follow the last tensor's data"), r.err());
    }

    @Test
    void inspectOfAMissingFileNamesIt() {
        Result r = run("inspect", tmp.resolve("missing.safetensors").toString());
        assertEquals(SafetensorsCli.EXIT_INVALID, r.exit());
        assertTrue(r.err().contains("missing.safetensors: no such file"), r.err());
    }

    // ------------------------------------------------------------------ verify

    @Test
    void verifyReportsEachFileAndFailsIfAnyIsBad() throws IOException {
        Path good = goodFile();
        byte[] valid = rawFile("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4);
        Path truncated = write("truncated.safetensors", Arrays.copyOf(valid, valid.length - 1));
        Path duplicate = write("duplicate.safetensors", rawFile(
                "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                        + "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 2));
        Path tiny = write("tiny.safetensors", new byte[] {1, 2, 3});
        Path missing = tmp.resolve("missing.safetensors");

        Result r = run("verify", good.toString(), truncated.toString(), duplicate.toString(), tiny.toString(),
                missing.toString());
        assertEquals(SafetensorsCli.EXIT_INVALID, r.exit());
        List<String> lines = r.out().lines().toList();
        assertEquals("OK " + good, lines.get(0));
        assertTrue(lines.get(1).startsWith("FAIL " + truncated + ": "), lines.get(1));
        assertTrue(lines.get(1).contains("the file ends before the last tensor's data"), lines.get(1));
        assertTrue(lines.get(2).startsWith("FAIL " + duplicate + ": "), lines.get(2));
        assertTrue(lines.get(2).contains("a key appears more than once"), lines.get(2));
        assertTrue(lines.get(3).startsWith("FAIL " + tiny + ": "), lines.get(3));
        assertTrue(lines.get(4).startsWith("FAIL " + missing + ": no such file"), lines.get(4));
        assertEquals("1 of 5 files OK", lines.get(5));

        Result ok = run("verify", good.toString());
        assertEquals(0, ok.exit());
        assertEquals("OK " + good, ok.out().strip());
    }

    // ------------------------------------------------------------------ export + pack

    @Test
    void exportThenPackReproducesTheFile() throws IOException {
        Path original = goodFile();
        Path dir = tmp.resolve("exported");
        Result e = run("export", original.toString(), "--out", dir.toString());
        assertEquals(0, e.exit(), e.err());

        Map<?, ?> manifest = (Map<?, ?>) Json.read(dir.resolve("manifest.json"));
        try (SafetensorsFile f = SafetensorsFile.open(original)) {
            assertEquals(List.copyOf(f.metadata().entrySet()),
                    List.copyOf(((Map<?, ?>) manifest.get("metadata")).entrySet()));
            List<?> tensors = (List<?>) manifest.get("tensors");
            assertEquals(f.size(), tensors.size());
            for (int i = 0; i < f.size(); i++) {
                Tensor t = f.tensors().get(i);
                Map<?, ?> j = (Map<?, ?>) tensors.get(i);
                assertEquals(t.name(), j.get("name"));
                assertEquals(t.dtype().name(), j.get("dtype"));
                assertEquals(Arrays.stream(t.shape()).boxed().toList(), j.get("shape"));
                assertEquals(List.of(t.info().begin(), t.info().end()), j.get("data_offsets"));
                assertEquals(i + ".bin", j.get("file"));
                assertArrayEquals(t.toByteArray(), Files.readAllBytes(dir.resolve(i + ".bin")), t.name());
            }
        }

        // The manifest is a spec; in offset order, both layouts reproduce our writer's file exactly.
        for (String order : List.of("--keep-order", "")) {
            Path packed = tmp.resolve("packed" + order + ".safetensors");
            Result p = order.isEmpty()
                    ? run("pack", dir.resolve("manifest.json").toString(), "--out", packed.toString())
                    : run("pack", dir.resolve("manifest.json").toString(), "--out", packed.toString(), order);
            assertEquals(0, p.exit(), p.err());
            assertArrayEquals(Files.readAllBytes(original), Files.readAllBytes(packed), "pack " + order);
        }
    }

    @Test
    void exportOfAnInvalidFileFailsAndLeavesNoManifest() throws IOException {
        Path dir = tmp.resolve("exported");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("manifest.json"), "{\"stale\": true}");
        byte[] valid = rawFile("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4);
        Path truncated = write("truncated.safetensors", Arrays.copyOf(valid, valid.length - 1));
        Result r = run("export", truncated.toString(), "--out", dir.toString());
        assertEquals(SafetensorsCli.EXIT_INVALID, r.exit());
        assertTrue(r.err().contains(truncated + ": the file ends before the last tensor's data"), r.err());
        assertTrue(Files.exists(dir.resolve("manifest.json")), "a failed open touches nothing");

        Path good = goodFile();
        assertEquals(0, run("export", good.toString(), "--out", dir.toString()).exit());
        assertFalse(Files.readString(dir.resolve("manifest.json")).contains("stale"));
    }

    @Test
    void packLaysOutInReferenceOrderUnlessKeepOrder() throws IOException {
        Files.write(tmp.resolve("b.bin"), new byte[] {1, 2});
        Files.write(tmp.resolve("f.bin"), new byte[] {0, 0, (byte) 0x80, 0x3F});
        Files.write(tmp.resolve("a.bin"), new byte[] {9});
        Path spec = tmp.resolve("spec.json");
        Files.writeString(spec, """
                {"metadata": {"k": "v"},
                 "tensors": [
                   {"name": "bytes", "dtype": "U8", "shape": [2], "file": "b.bin"},
                   {"name": "float", "dtype": "F32", "shape": [], "file": "f.bin"},
                   {"name": "abyte", "dtype": "I8", "shape": [1, 1], "file": "a.bin"}
                 ]}
                """);
        Path reference = tmp.resolve("reference.safetensors");
        assertEquals(0, run("pack", spec.toString(), "--out", reference.toString()).exit());
        Path kept = tmp.resolve("kept.safetensors");
        assertEquals(0, run("pack", spec.toString(), "--out", kept.toString(), "--keep-order").exit());
        try (SafetensorsFile r = SafetensorsFile.open(reference); SafetensorsFile k = SafetensorsFile.open(kept)) {
            // Reference: descending alignment (F32 > I8 > U8 in the reference's dtype order), then name.
            assertEquals(List.of("float", "abyte", "bytes"), r.tensors().stream().map(Tensor::name).toList());
            assertEquals(List.of("bytes", "float", "abyte"), k.tensors().stream().map(Tensor::name).toList());
            assertEquals(1.0f, r.tensor("float").getFloat(0));
            assertEquals(Map.of("k", "v"), r.metadata());
            assertArrayEquals(new byte[] {1, 2}, k.tensor("bytes").toByteArray());
        }
    }

    @Test
    void packRejectsBadSpecsWithExit1() throws IOException {
        Files.write(tmp.resolve("x.bin"), new byte[] {1, 2, 3});
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("{\"tensors\": [{\"name\": \"x\", \"dtype\": \"F32\", \"shape\": [1], \"file\": \"x.bin\"}]}",
                "x.bin has 3 bytes but F32 [1] needs 4");
        cases.put("{\"tensors\": [{\"name\": \"x\", \"dtype\": \"F31\", \"shape\": [3], \"file\": \"x.bin\"}]}",
                "unknown dtype \"F31\"");
        cases.put("{\"tensors\": [{\"name\": \"x\", \"dtype\": \"U8\", \"shape\": [3], \"file\": \"x.bin\"},"
                + " {\"name\": \"x\", \"dtype\": \"U8\", \"shape\": [3], \"file\": \"x.bin\"}]}",
                "the name appears more than once");
        cases.put("{\"tensors\": [{\"name\": \"x\", \"dtype\": \"U8\", \"shape\": [-3], \"file\": \"x.bin\"}]}",
                "not a non-negative integer");
        cases.put("{\"tensors\": [], \"extra\": 1}", "unknown key \"extra\"");
        cases.put("{\"metadata\": {\"k\": 1}, \"tensors\": []}", "metadata \"k\" must be a string");
        cases.put("{\"tensors\": [{\"name\": \"x\", \"dtype\": \"F4\", \"shape\": [3], \"file\": \"x.bin\"}]}",
                "not a multiple of 8");
        cases.put("{\"tensors\": [{\"name\": \"x\", \"dtype\": \"U8\", \"shape\": [3], \"file\": \"nope.bin\"}]}",
                "nope.bin: no such file");
        cases.put("{\"tensors\": [], \"tensors\": []}", "the key 'tensors' appears twice in one object");
        int i = 0;
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Path spec = tmp.resolve("spec" + i++ + ".json");
            Files.writeString(spec, c.getKey());
            Path out = tmp.resolve("out.safetensors");
            Result r = run("pack", spec.toString(), "--out", out.toString());
            assertEquals(SafetensorsCli.EXIT_INVALID, r.exit(), c.getKey() + "\n" + r.out() + r.err());
            assertTrue(r.err().contains(c.getValue()), "expected '" + c.getValue() + "' in: " + r.err());
            assertFalse(Files.exists(out), "nothing is written when the spec is bad");
        }
        assertEquals(SafetensorsCli.EXIT_USAGE, run("pack", tmp.resolve("spec0.json").toString()).exit(),
                "--out is required");
    }

    // ------------------------------------------------------------------ demo

    @Test
    void smallDemoVerifiesAndReportsThroughput() throws IOException {
        Path dir = tmp.resolve("demo");
        Result r = run("demo", "--size-mb", "8", "--reps", "2", "--dir", dir.toString());
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("all equal: 11 tensors"), r.out());
        assertTrue(r.out().contains("demo finished: every tensor verified"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("\\s+ratio\\s+\\d+\\.\\d\\d .*")), r.out());
        assertTrue(r.out().contains("kernels:"), r.out());
        // --dir keeps the file, and it is a valid file with every dtype the demo promises.
        try (SafetensorsFile f = SafetensorsFile.open(dir.resolve(DemoCommand.FILE_NAME))) {
            List<Dtype> dtypes = f.tensors().stream().map(Tensor::dtype).distinct().toList();
            for (Dtype d : List.of(Dtype.F32, Dtype.F16, Dtype.BF16, Dtype.I64, Dtype.I32, Dtype.U8, Dtype.BOOL,
                    Dtype.F64)) {
                assertTrue(dtypes.contains(d), d.name());
            }
            assertTrue(f.tensors().stream().anyMatch(t -> t.rank() == 0), "a scalar");
            assertTrue(f.tensors().stream().anyMatch(t -> t.elementCount() == 0), "an empty tensor");
            assertEquals("pt", f.metadata().get("format"));
            long total = f.header().dataSize();
            assertTrue(total > 7 * (1 << 20) && total <= 8 * (1 << 20), "size " + total);
            // The generator's masks keep values sensible: floats in ±[0.5, 1), booleans 0 or 1.
            Tensor bf16 = f.tensor("model.embed_tokens.weight");
            for (long i = 0; i < 1000; i++) {
                double v = Math.abs(bf16.getAsDouble(i));
                assertTrue(v >= 0.5 && v < 1, "bf16 " + v);
            }
            Tensor mask = f.tensor("batch.attention_mask");
            for (long i = 0; i < 1000; i++) {
                assertTrue(mask.getByte(i) == 0 || mask.getByte(i) == 1);
            }
        }
    }

    @Test
    void demoWithATemporaryDirectoryCleansUp() throws IOException {
        Result r = run("demo", "--size-mb", "1", "--reps", "1");
        assertEquals(0, r.exit(), r.out() + r.err());
        String line = r.out().lines().filter(l -> l.startsWith("  file:")).findFirst().orElseThrow();
        Path file = Path.of(line.substring("  file:".length()).strip().split(" \\(")[0]);
        assertFalse(Files.exists(file), file + " should be deleted");
        assertFalse(Files.exists(file.getParent()), file.getParent() + " should be deleted");
    }

    @Test
    void demoRejectsANonPositiveSize() {
        assertEquals(SafetensorsCli.EXIT_USAGE, run("demo", "--size-mb", "0").exit());
    }

    @Test
    void demoDataDoesNotDependOnChunking() {
        DemoData.Planned p = DemoData.plan(1 << 20, 7).getFirst();
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            var whole = arena.allocate(p.bytes());
            new DemoData.Stream(p).next(whole);
            var chunk = arena.allocate(4096);
            DemoData.Stream s = new DemoData.Stream(p);
            long off = 0;
            while (s.remaining() > 0) {
                long n = s.next(chunk);
                assertEquals(-1, java.lang.foreign.MemorySegment.mismatch(chunk, 0, n, whole, off, off + n));
                off += n;
            }
            assertEquals(p.bytes(), off);
        }
    }

    // ------------------------------------------------------------------ convert

    @Test
    void convertToF32WidensFloatsAndCopiesTheRest() throws IOException {
        Path out = tmp.resolve("f32.safetensors");
        Result r = run("convert", goodFile().toString(), out.toString(), "--to", "F32");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("converted 3 tensor(s) to F32"), r.out());
        try (SafetensorsFile f = SafetensorsFile.open(out)) {
            assertArrayEquals(new float[] {1, 2, -2, 0}, f.tensor("half").toFloatArray());
            assertArrayEquals(new float[] {1, 2}, f.tensor("brain").toFloatArray());
            assertArrayEquals(new float[] {(float) Math.PI, -0.0f}, f.tensor("f64").toFloatArray());
            assertArrayEquals(new long[] {1, 1, 2}, f.tensor("f64").shape());
            assertEquals(Dtype.I64, f.tensor("ids").dtype(), "integers are kept without --widen-integers");
            assertEquals("pt", f.metadata().get("format"));
            assertEquals(List.of("format", "zeta", "alpha"), List.copyOf(f.metadata().keySet()));
        }
    }

    @Test
    void convertToBf16RoundsToNearestEvenOrTruncates() throws IOException {
        Path in = tmp.resolve("in.safetensors");
        // 0x3F818000 is a tie: RNE goes up to the even 0x3F82, truncation keeps 0x3F81.
        new SafetensorsWriter().add("w", Dtype.F32, new long[] {2}, new float[] {Float.intBitsToFloat(0x3F818000), 1f})
                .write(in);
        Path rne = tmp.resolve("rne.safetensors");
        Path trunc = tmp.resolve("trunc.safetensors");
        assertEquals(0, run("convert", in.toString(), rne.toString(), "--to", "BF16").exit());
        assertEquals(0, run("convert", in.toString(), trunc.toString(), "--to", "BF16", "--rounding", "trunc").exit());
        try (SafetensorsFile a = SafetensorsFile.open(rne); SafetensorsFile b = SafetensorsFile.open(trunc)) {
            assertArrayEquals(new short[] {0x3F82, 0x3F80}, a.tensor("w").toShortArray());
            assertArrayEquals(new short[] {0x3F81, 0x3F80}, b.tensor("w").toShortArray());
            assertEquals(Dtype.BF16, a.tensor("w").dtype());
        }
    }

    @Test
    void convertListsF64TensorsItCannotRoundOnceAndRejectsBadOptions() throws IOException {
        Path out = tmp.resolve("f16.safetensors");
        Result r = run("convert", goodFile().toString(), out.toString(), "--to", "F16");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("kept unchanged, no single-rounding kernel: f64 (F64)"), r.out());
        assertEquals(SafetensorsCli.EXIT_USAGE, run("convert", goodFile().toString(), out.toString(), "--to", "I32").exit());
        assertEquals(SafetensorsCli.EXIT_USAGE,
                run("convert", goodFile().toString(), out.toString(), "--to", "F32", "--rounding", "trunc").exit());
    }

    /** --to offers what convert converts to, no more: the help and the error for a bad value list those three. */
    @Test
    void convertOffersOnlyTheDtypesItConvertsTo() {
        Result bad = run("convert", "in.safetensors", "out.safetensors", "--to", "BF17");
        assertEquals(SafetensorsCli.EXIT_USAGE, bad.exit());
        assertTrue(bad.err().contains("expected one of [F32, F16, BF16]"), bad.err());
        Result wrongKind = run("convert", "in.safetensors", "out.safetensors", "--to", "I32");
        assertTrue(wrongKind.err().contains("expected one of [F32, F16, BF16]"), wrongKind.err());
        Result help = run("convert", "--help");
        assertTrue(help.out().contains("F32, F16, BF16."), help.out());
        assertTrue(!help.out().contains("I32") && !help.out().contains("U8"), help.out());
    }

    /** --version names the jar, the native library and its ISA (or why there is none), and the JDK. */
    @Test
    void versionNamesTheJarTheNativeLibraryAndTheJdk() {
        Result r = run("--version");
        assertEquals(0, r.exit(), r.err());
        List<String> lines = r.out().lines().toList();
        assertTrue(lines.get(0).startsWith("safetensors-cli "), r.out());
        assertTrue(lines.get(1).startsWith("native kernels: "), r.out());
        String isa = Kernels.nativeIsa().orElse(null);
        if (isa != null) {
            assertTrue(lines.get(1).contains("libsafetensors_native " + Kernels.nativeVersion().orElseThrow())
                    && lines.get(1).contains("ISA " + isa), r.out());
        }
        assertTrue(lines.get(2).startsWith("kernel path: " + Kernels.description()), r.out());
        assertTrue(lines.get(3).startsWith("JDK: " + System.getProperty("java.version") + " "), r.out());
    }

    /** A broken spec is described in our words with its place, not with the JSON library's feature names. */
    @Test
    void packDescribesBrokenJsonWithoutLibraryInternals() throws IOException {
        Path spec = write("spec.json", "{\"tensors\": [NaN]}".getBytes(StandardCharsets.UTF_8));
        Result r = run("pack", spec.toString(), "--out", tmp.resolve("out.safetensors").toString());
        assertEquals(SafetensorsCli.EXIT_INVALID, r.exit(), r.err());
        assertTrue(r.err().contains(spec + ": invalid JSON at line 1, column "), r.err());
        assertTrue(r.err().contains("NaN and Infinity are not JSON numbers"), r.err());
        assertFalse(r.err().contains("JsonReadFeature") || r.err().contains("`"), r.err());
    }
}
