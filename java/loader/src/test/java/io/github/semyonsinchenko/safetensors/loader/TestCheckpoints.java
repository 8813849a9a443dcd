package io.github.semyonsinchenko.safetensors.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** Random safetensors files on local disk, and the reference bytes to compare loads against. */
final class TestCheckpoints {
    private static final Dtype[] DTYPES = {Dtype.F32, Dtype.BF16, Dtype.F16, Dtype.I64, Dtype.U8};

    private TestCheckpoints() {
    }

    /** Writes {@code files} shards of {@code tensors} random tensors each (sizes 0 to maxElems elements). */
    static List<Path> write(Path dir, int files, int tensors, int maxElems, long seed) throws IOException {
        Files.createDirectories(dir);
        Random rnd = new Random(seed);
        List<Path> out = new java.util.ArrayList<>();
        for (int f = 0; f < files; f++) {
            SafetensorsWriter w = new SafetensorsWriter().metadata("format", "pt");
            for (int i = 0; i < tensors; i++) {
                Dtype d = DTYPES[rnd.nextInt(DTYPES.length)];
                int elems = i % 7 == 6 ? 0 : 1 + rnd.nextInt(maxElems);
                byte[] data = new byte[elems * d.byteSize()];
                rnd.nextBytes(data);
                w.add("layer" + f + "." + i + ".weight", d, new long[] {elems}, data);
            }
            Path p = dir.resolve(String.format(java.util.Locale.ROOT, "model-%05d-of-%05d.safetensors", f + 1, files));
            w.write(p);
            out.add(p);
        }
        return out;
    }

    /**
     * Writes {@code files} shards shaped like a transformer's: per layer a norm (1-D), 2-D weights of
     * random shapes (rows and columns 1 to {@code maxDim}), a bias, a stacked 3-D tensor and a
     * scalar, in random dtypes, with random bytes.
     */
    static List<Path> writeMatrices(Path dir, int files, int layers, int maxDim, long seed) throws IOException {
        Files.createDirectories(dir);
        Random rnd = new Random(seed);
        List<Path> out = new java.util.ArrayList<>();
        Dtype[] dtypes = {Dtype.F32, Dtype.BF16, Dtype.F16, Dtype.U8, Dtype.I64, Dtype.F8_E4M3};
        for (int f = 0; f < files; f++) {
            SafetensorsWriter w = new SafetensorsWriter().metadata("format", "pt");
            for (int l = 0; l < layers; l++) {
                String p = "model.layers." + (f * layers + l) + ".";
                long h = 1 + rnd.nextInt(maxDim);
                add(w, rnd, p + "input_layernorm.weight", dtypes[rnd.nextInt(dtypes.length)], h);
                for (String m : new String[] {"self_attn.q_proj.weight", "self_attn.o_proj.weight",
                    "mlp.down_proj.weight"}) {
                    add(w, rnd, p + m, dtypes[rnd.nextInt(dtypes.length)], 1 + rnd.nextInt(maxDim), h);
                }
                add(w, rnd, p + "self_attn.q_proj.bias", dtypes[rnd.nextInt(dtypes.length)], 1 + rnd.nextInt(maxDim));
                add(w, rnd, p + "experts.weight", dtypes[rnd.nextInt(dtypes.length)], 1 + rnd.nextInt(4),
                        1 + rnd.nextInt(maxDim), 1 + rnd.nextInt(8));
                add(w, rnd, p + "scale", Dtype.F32);
                if (l % 3 == 2) {
                    add(w, rnd, p + "empty.weight", Dtype.BF16, 0, h);
                }
            }
            Path path = dir.resolve(String.format(java.util.Locale.ROOT, "model-%05d-of-%05d.safetensors", f + 1,
                    files));
            w.write(path);
            out.add(path);
        }
        return out;
    }

    private static void add(SafetensorsWriter w, Random rnd, String name, Dtype d, long... shape) {
        byte[] data = new byte[(int) (product(shape) * d.byteSize())];
        rnd.nextBytes(data);
        w.add(name, d, shape, data);
    }

    /** Tensor name -> its bytes, from core's reader. */
    static Map<String, byte[]> reference(List<Path> files) throws IOException {
        Map<String, byte[]> out = new HashMap<>();
        for (Path p : files) {
            try (SafetensorsFile f = SafetensorsFile.open(p)) {
                for (var t : f) {
                    out.put(t.name(), t.data().toArray(ValueLayout.JAVA_BYTE));
                }
            }
        }
        return out;
    }

    /** Loads every tensor, checks each against the reference bit for bit, returns the names in order. */
    static List<String> loadAndCheck(SafetensorsLoader loader, Map<String, byte[]> reference) throws IOException {
        List<String> names = new java.util.ArrayList<>();
        LoadedTensor t;
        while ((t = loader.next()) != null) {
            try (LoadedTensor closing = t) {
                byte[] expected = reference.get(t.name());
                assertTrue(expected != null, "unexpected tensor " + t.name());
                assertTrue(t.data().isReadOnly(), t.name());
                assertArrayEquals(expected, t.data().toArray(ValueLayout.JAVA_BYTE), t.name());
                assertEquals(expected.length / t.dtype().byteSize(), product(t.shape()), t.name());
                names.add(t.name());
            }
        }
        return names;
    }

    static long product(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }
}
