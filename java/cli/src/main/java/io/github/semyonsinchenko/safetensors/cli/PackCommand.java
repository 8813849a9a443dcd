package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "pack",
        header = "Write a file from raw tensor files and a JSON spec (interop).",
        mixinStandardHelpOptions = true,
        description = {
            "Writes a safetensors file from raw tensor files described by SPEC.json:",
            "  {\"metadata\": {\"k\": \"v\", ...}, \"tensors\": [{\"name\", \"dtype\", \"shape\", \"file\"}, ...]}",
            "Each \"file\" (relative to SPEC's directory) holds the tensor's bytes exactly as stored in"
                    + " safetensors (little-endian); its size must match dtype and shape. \"metadata\" is optional,"
                    + " and a \"data_offsets\" field is ignored, so an 'export' manifest is a valid SPEC.",
            "The raw files are memory-mapped read-only and streamed into FILE (nothing is staged on the heap);"
                    + " FILE is replaced atomically.",
            "Tensors are laid out as the reference writer does (by descending dtype alignment, then name)"
                    + " unless --keep-order."
        })
final class PackCommand implements Callable<Integer> {
    private static final Set<String> TOP_KEYS = Set.of("metadata", "tensors");
    private static final Set<String> TENSOR_KEYS = Set.of("name", "dtype", "shape", "file", "data_offsets");

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "SPEC.json", description = "The description of the tensors to write.")
    Path specFile;

    @Option(names = "--out", required = true, paramLabel = "FILE", description = "The .safetensors file to write.")
    Path outFile;

    @Option(names = "--keep-order", description = "Lay tensors out in SPEC's order instead of the reference order.")
    boolean keepOrder;

    /** One tensor of the spec. */
    record Item(String name, Dtype dtype, long[] shape, Path file) {}

    @Override
    public Integer call() throws IOException {
        SequencedMap<String, String> metadata = new LinkedHashMap<>();
        List<Item> items = parseSpec(specFile, metadata);

        List<Header.Entry> entries = new ArrayList<>(items.size());
        for (Item it : items) {
            entries.add(new Header.Entry(it.name(), it.dtype(), it.shape()));
        }
        // Validates names, shapes and sizes with SPEC as the source named in errors.
        Header planned = Header.layout(metadata, entries, keepOrder, specFile.toString());

        SafetensorsWriter writer = new SafetensorsWriter().metadata(metadata).keepInsertionOrder(keepOrder);
        Header written;
        List<MappedFile> inputs = new ArrayList<>(items.size());
        try {
            for (Item it : items) {
                MappedFile in = MappedFile.open(it.file(), MappedFile.Sharing.CONFINED);
                inputs.add(in);
                checkSize(it, planned.tensor(it.name()).byteSize(), in.size());
                writer.add(it.name(), it.dtype(), it.shape(), in.segment());
            }
            written = writer.write(outFile);
        } finally {
            for (MappedFile in : inputs) {
                in.close();
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("packed " + written.size() + " tensors (" + Format.count(written.dataSize()) + " data bytes, "
                + Format.count(written.fileSize()) + " bytes in all) into " + outFile
                + (keepOrder ? " in SPEC order" : " in reference layout order"));
        out.flush();
        return SafetensorsCli.EXIT_OK;
    }

    /** A raw tensor file must hold exactly the bytes its dtype and shape need. */
    private void checkSize(Item it, long expected, long size) throws IOException {
        if (size != expected) {
            throw new IOException(specFile + ": tensor \"" + it.name() + "\": " + it.file() + " has " + size
                    + " bytes but " + it.dtype() + " " + Arrays.toString(it.shape()) + " needs " + expected);
        }
    }

    /** Parses SPEC strictly: unknown keys, wrong types and duplicate names are errors that name the entry. */
    static List<Item> parseSpec(Path specFile, Map<String, String> metadataOut) throws IOException {
        String src = specFile.toString();
        Object doc = Json.read(specFile);
        if (!(doc instanceof Map<?, ?> top)) {
            throw new IOException(src + ": the spec must be a JSON object with \"tensors\" (and optionally"
                    + " \"metadata\")");
        }
        for (Object key : top.keySet()) {
            if (!TOP_KEYS.contains(key)) {
                throw new IOException(src + ": unknown key \"" + key + "\" (expected " + TOP_KEYS + ")");
            }
        }
        Object meta = top.get("metadata");
        if (meta != null) {
            if (!(meta instanceof Map<?, ?> m)) {
                throw new IOException(src + ": \"metadata\" must be an object of strings");
            }
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!(e.getValue() instanceof String v)) {
                    throw new IOException(src + ": metadata \"" + e.getKey() + "\" must be a string, found "
                            + e.getValue());
                }
                metadataOut.put((String) e.getKey(), v);
            }
        }
        if (!(top.get("tensors") instanceof List<?> list)) {
            throw new IOException(src + ": \"tensors\" must be an array");
        }
        Path base = specFile.toAbsolutePath().getParent();
        List<Item> items = new ArrayList<>(list.size());
        Set<String> names = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            String where = src + ": tensors[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> t)) {
                throw new IOException(where + " must be an object");
            }
            for (Object key : t.keySet()) {
                if (!TENSOR_KEYS.contains(key)) {
                    throw new IOException(where + ": unknown key \"" + key + "\" (expected name, dtype, shape, file)");
                }
            }
            if (!(t.get("name") instanceof String name)) {
                throw new IOException(where + ": \"name\" must be a string");
            }
            where += " (\"" + name + "\")";
            if (!names.add(name)) {
                throw new IOException(where + ": the name appears more than once");
            }
            if (!(t.get("dtype") instanceof String dtypeName)) {
                throw new IOException(where + ": \"dtype\" must be a string");
            }
            Dtype dtype = Dtype.fromName(dtypeName);
            if (dtype == null) {
                throw new IOException(where + ": unknown dtype \"" + dtypeName + "\"; known: "
                        + Arrays.toString(Dtype.values()));
            }
            if (!(t.get("shape") instanceof List<?> dims)) {
                throw new IOException(where + ": \"shape\" must be an array of integers");
            }
            long[] shape = new long[dims.size()];
            for (int d = 0; d < shape.length; d++) {
                if (!(dims.get(d) instanceof Long v) || v < 0) {
                    throw new IOException(where + ": shape entry " + d + " is " + dims.get(d)
                            + ", not a non-negative integer");
                }
                shape[d] = v;
            }
            if (!(t.get("file") instanceof String file)) {
                throw new IOException(where + ": \"file\" must be a string (a path relative to the spec)");
            }
            items.add(new Item(name, dtype, shape, base.resolve(file)));
        }
        return items;
    }
}
