package io.github.semyonsinchenko.safetensors.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SequencedMap;
import java.util.Set;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Property-style round trip with a fixed seed per case (no property-testing library): random
 * tensor sets of every dtype, random shapes (scalars, zero dimensions), random names and metadata
 * (non-ASCII, supplementary characters, control characters) go through {@link SafetensorsWriter},
 * then back through {@link Header#parse} and {@link SafetensorsFile#open}. A failing case names its
 * seed; rerun just that case to debug it.
 */
class RoundTripPropertyTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int CASES = 300;
    private static final long BASE_SEED = 20_251_122L;

    /** Pieces names and metadata are built from; includes U+1F600 (a surrogate pair in Java). */
    private static final String[] PIECES = {
        "w", "bias", "layer", ".", "/", "_", "0", "9", " ", "-", "\u00e9", "\u00df", "\u4e2d", "\uff21",
        "\uD83D\uDE00", "\uD834\uDD1E", "\"", "\\", "\n", "\t", "\u0001", "\u001f", "\u007f", "\u2028", "__"
    };

    record Spec(String name, Dtype dtype, long[] shape, byte[] data) {}

    static Stream<Long> seeds() {
        return IntStream.range(0, CASES).mapToObj(i -> BASE_SEED + i);
    }

    private static String randomString(Random rnd, int maxPieces) {
        StringBuilder sb = new StringBuilder();
        int n = rnd.nextInt(maxPieces + 1);
        for (int i = 0; i < n; i++) {
            sb.append(PIECES[rnd.nextInt(PIECES.length)]);
        }
        return sb.toString();
    }

    private static long[] randomShape(Random rnd, Dtype dtype) {
        int rank = rnd.nextInt(5);
        long[] shape = new long[rank];
        for (int i = 0; i < rank; i++) {
            shape[i] = rnd.nextInt(6) == 0 ? 0 : 1 + rnd.nextInt(6);
        }
        long count = Arrays.stream(shape).reduce(1, Math::multiplyExact);
        if (count * dtype.bits() % 8 != 0) {
            // Sub-byte dtypes: F4 needs an even count, F6 a multiple of 4 to fill whole bytes.
            shape = Arrays.copyOf(shape, rank + 1);
            shape[rank] = dtype.bits() == 4 ? 2 : 4;
        }
        return shape;
    }

    private static List<Spec> randomTensors(Random rnd) {
        int n = rnd.nextInt(9);
        Set<String> names = new HashSet<>();
        List<Spec> specs = new ArrayList<>();
        while (specs.size() < n) {
            String name = randomString(rnd, 4);
            if (name.equals(Header.METADATA_KEY) || !names.add(name)) {
                continue;
            }
            Dtype dtype = Dtype.values()[rnd.nextInt(Dtype.values().length)];
            long[] shape = randomShape(rnd, dtype);
            long count = Arrays.stream(shape).reduce(1, Math::multiplyExact);
            byte[] data = new byte[Math.toIntExact(count * dtype.bits() / 8)];
            rnd.nextBytes(data);
            if (dtype == Dtype.F32 || dtype == Dtype.F64) {
                finiteFloats(rnd, dtype, data); // so the float[]/double[] entry points carry them unchanged
            }
            specs.add(new Spec(name, dtype, shape, data));
        }
        return specs;
    }

    private static void finiteFloats(Random rnd, Dtype dtype, byte[] data) {
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (dtype == Dtype.F32) {
                b.putFloat((float) rnd.nextGaussian());
            } else {
                b.putDouble(rnd.nextGaussian());
            }
        }
    }

    private static SequencedMap<String, String> randomMetadata(Random rnd) {
        SequencedMap<String, String> m = new LinkedHashMap<>();
        int n = rnd.nextInt(5);
        while (m.size() < n) {
            m.putIfAbsent(randomString(rnd, 3), randomString(rnd, 6));
        }
        return m;
    }

    /** Adds {@code s} through one of the writer's entry points, chosen at random. */
    private static void add(SafetensorsWriter w, Spec s, Random rnd) {
        ByteBuffer le = ByteBuffer.wrap(s.data()).order(ByteOrder.LITTLE_ENDIAN);
        switch (rnd.nextInt(4)) {
            case 0 -> w.add(s.name(), s.dtype(), s.shape(), s.data().clone());
            case 1 -> w.add(s.name(), s.dtype(), s.shape(), MemorySegment.ofArray(s.data().clone()));
            case 2 -> w.add(s.name(), s.dtype(), s.shape(), (SafetensorsWriter.ByteSource) out ->
                    out.write(ByteBuffer.wrap(s.data())));
            default -> {
                switch (s.dtype()) {
                    case F32 -> {
                        float[] a = new float[s.data().length / 4];
                        le.asFloatBuffer().get(a);
                        w.add(s.name(), s.dtype(), s.shape(), a);
                    }
                    case F64 -> {
                        double[] a = new double[s.data().length / 8];
                        le.asDoubleBuffer().get(a);
                        w.add(s.name(), s.dtype(), s.shape(), a);
                    }
                    case I32, U32 -> {
                        int[] a = new int[s.data().length / 4];
                        le.asIntBuffer().get(a);
                        w.add(s.name(), s.dtype(), s.shape(), a);
                    }
                    case I64, U64, C64 -> {
                        long[] a = new long[s.data().length / 8];
                        le.asLongBuffer().get(a);
                        w.add(s.name(), s.dtype(), s.shape(), a);
                    }
                    case I16, U16, F16, BF16 -> {
                        short[] a = new short[s.data().length / 2];
                        le.asShortBuffer().get(a);
                        w.add(s.name(), s.dtype(), s.shape(), a);
                    }
                    default -> w.add(s.name(), s.dtype(), s.shape(), s.data().clone());
                }
            }
        }
    }

    /** The reference layout, computed independently: dtype ordinal descending, then unsigned UTF-8 bytes. */
    private static List<String> referenceOrder(List<Spec> specs) {
        Comparator<Spec> byDtype = Comparator.comparing((Spec s) -> s.dtype().ordinal()).reversed();
        Comparator<Spec> byUtf8 = (a, b) -> Arrays.compareUnsigned(a.name().getBytes(StandardCharsets.UTF_8),
                b.name().getBytes(StandardCharsets.UTF_8));
        return specs.stream().sorted(byDtype.thenComparing(byUtf8)).map(Spec::name).toList();
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void writeThenRead(long seed, @TempDir Path tmp) throws IOException {
        Random rnd = new Random(seed);
        List<Spec> specs = randomTensors(rnd);
        SequencedMap<String, String> metadata = randomMetadata(rnd);
        boolean keepOrder = rnd.nextInt(10) == 0;

        SafetensorsWriter w = new SafetensorsWriter().keepInsertionOrder(keepOrder);
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            w.metadata(e.getKey(), e.getValue());
        }
        for (Spec s : specs) {
            add(w, s, rnd);
        }
        Path file = tmp.resolve("case.safetensors");
        byte[] bytes;
        switch (rnd.nextInt(3)) {
            case 0 -> {
                w.write(file);
                bytes = Files.readAllBytes(file);
            }
            case 1 -> {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                w.write(out);
                bytes = out.toByteArray();
                Files.write(file, bytes);
            }
            default -> {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                w.write(Channels.newChannel(out));
                bytes = out.toByteArray();
                Files.write(file, bytes);
            }
        }

        // Framing: N is a multiple of 8 and the padding is spaces after the closing brace.
        long n = ByteBuffer.wrap(bytes, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        assertEquals(0, n % 8, "header length " + n);
        String json = new String(bytes, 8, (int) n, StandardCharsets.UTF_8);
        assertTrue(json.startsWith("{") && json.stripTrailing().endsWith("}"), json);
        assertTrue(n - json.stripTrailing().getBytes(StandardCharsets.UTF_8).length < 8, json);
        assertEquals(metadata.isEmpty(), !json.startsWith("{\"" + Header.METADATA_KEY + "\":"), json);

        // Layout: the header lists tensors in the reference's order, each starting where the previous ends.
        // (Header.tensors() is sorted by offsets, where a zero-byte tensor may tie with its neighbour,
        // so the order is read from the JSON text itself.)
        List<String> expectedOrder = keepOrder ? specs.stream().map(Spec::name).toList() : referenceOrder(specs);
        List<String> keyOrder = new ArrayList<>();
        long offset = 0;
        for (Map.Entry<String, JsonNode> e : JSON.readTree(json).properties()) {
            if (!e.getKey().equals(Header.METADATA_KEY)) {
                keyOrder.add(e.getKey());
                assertEquals(offset, e.getValue().at("/data_offsets/0").asLong(), e.getKey());
                offset = e.getValue().at("/data_offsets/1").asLong();
            }
        }
        assertEquals(expectedOrder, keyOrder);
        assertEquals(bytes.length, 8 + n + offset);

        Header h = Header.parse(Arrays.copyOfRange(bytes, 8, 8 + (int) n), bytes.length, "seed " + seed);
        assertEquals(List.copyOf(metadata.entrySet()), List.copyOf(h.metadata().entrySet()));
        assertEquals(bytes.length, h.fileSize());

        try (SafetensorsFile f = SafetensorsFile.open(file)) {
            assertEquals(specs.size(), f.size());
            assertEquals(List.copyOf(metadata.entrySet()), List.copyOf(f.metadata().entrySet()));
            for (Spec s : specs) {
                Tensor t = f.tensor(s.name());
                assertEquals(s.dtype(), t.dtype(), s.name());
                assertArrayEquals(s.shape(), t.shape(), s.name());
                assertArrayEquals(s.data(), t.toByteArray(), s.name());
                TensorInfo info = h.tensor(s.name());
                assertEquals(info, t.info());
                assertArrayEquals(s.data(), Arrays.copyOfRange(bytes, (int) (h.dataOffset() + info.begin()),
                        (int) (h.dataOffset() + info.end())), s.name());
            }
        }
    }

    /** The cases above really reach every dtype, scalars, zero dimensions and the awkward characters. */
    @Test
    void casesCoverTheSpace() {
        Set<Dtype> dtypes = EnumSet.noneOf(Dtype.class);
        boolean scalar = false;
        boolean zeroDim = false;
        boolean supplementary = false;
        boolean control = false;
        boolean emptyFile = false;
        int withMetadata = 0;
        for (long seed : seeds().toList()) {
            Random rnd = new Random(seed);
            List<Spec> specs = randomTensors(rnd);
            withMetadata += randomMetadata(rnd).isEmpty() ? 0 : 1;
            emptyFile |= specs.isEmpty();
            for (Spec s : specs) {
                dtypes.add(s.dtype());
                scalar |= s.shape().length == 0;
                zeroDim |= Arrays.stream(s.shape()).anyMatch(d -> d == 0);
                supplementary |= s.name().codePoints().anyMatch(Character::isSupplementaryCodePoint);
                control |= s.name().chars().anyMatch(c -> c < 0x20);
            }
        }
        assertEquals(EnumSet.allOf(Dtype.class), dtypes);
        assertTrue(scalar && zeroDim && supplementary && control && emptyFile && withMetadata > CASES / 2,
                "scalar " + scalar + ", zero dim " + zeroDim + ", supplementary " + supplementary + ", control "
                        + control + ", no tensors " + emptyFile + ", with metadata " + withMetadata);
    }
}
