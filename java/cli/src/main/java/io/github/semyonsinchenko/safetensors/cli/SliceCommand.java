package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.NameGlob;
import io.github.semyonsinchenko.safetensors.io.SafetensorsBuffer;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.io.Slice;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.io.TensorSlice;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import java.util.concurrent.Callable;
import java.util.function.Predicate;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "slice",
        header = "Write slices of some tensors of a file to a new file.",
        mixinStandardHelpOptions = true,
        description = {
            "Reads IN (mapped, or whole into memory with --from-memory), takes the tensors --tensors selects (all by"
                    + " default), slices each by the first --slice whose GLOB matches its name (numpy syntax:"
                    + " '0:128, :', '::2', '3, ...'; no --slice: whole), converts them with --to, and writes them with"
                    + " IN's metadata to OUT (atomically). Strided slices are copied in one pass, converted on the"
                    + " way.",
            "--spec FILE instead lists the outputs one a line: OUT_NAME<TAB>TENSOR<TAB>SLICE[<TAB>DTYPE]."
        })
final class SliceCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "IN", description = "The .safetensors file to read.")
    Path in;

    @Parameters(index = "1", paramLabel = "OUT", description = "The .safetensors file to write.")
    Path out;

    @Option(names = "--tensors", paramLabel = "GLOB",
            description = "Take only tensors whose name matches GLOB (fnmatch: *, ?, [..]); repeatable.")
    List<String> tensors = List.of();

    @Option(names = "--slice", paramLabel = "[GLOB=]SLICE",
            description = "The slice of the tensors matching GLOB (every tensor without GLOB=); repeatable, the"
                    + " first match wins.")
    List<String> slices = List.of();

    @Option(names = "--to", paramLabel = "DTYPE", description = "Convert every output to DTYPE on the way.")
    Dtype to;

    @Option(names = "--spec", paramLabel = "FILE", description = "Outputs listed one a line (see above).")
    Path specFile;

    @Option(names = "--from-memory", description = "Read IN whole into memory and parse it there instead of"
            + " mapping it.")
    boolean fromMemory;

    /** One output: its name, the tensor, the slice and the dtype to write. */
    private record Output(String name, String tensor, Slice slice, Dtype dtype) {
    }

    @Override
    public Integer call() throws IOException {
        if (specFile != null && (!tensors.isEmpty() || !slices.isEmpty() || to != null)) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--spec lists every output; it cannot be combined with --tensors, --slice or --to");
        }
        PrintWriter printer = spec.commandLine().getOut();
        SafetensorsFile file = null;
        SafetensorsBuffer buffer = null;
        try (Arena arena = Arena.ofConfined()) {
            Map<String, Tensor> source;
            SequencedMap<String, String> metadata;
            if (fromMemory) {
                buffer = SafetensorsBuffer.read(in, arena);
                source = buffer.asMap();
                metadata = buffer.metadata();
            } else {
                file = SafetensorsFile.open(in, MappedFile.Sharing.CONFINED);
                source = file.asMap();
                metadata = file.metadata();
            }
            List<Output> outputs = specFile != null ? readSpec() : fromOptions(source);
            SafetensorsWriter writer = new SafetensorsWriter().metadata(metadata);
            long bytes = 0;
            for (Output o : outputs) {
                Tensor t = source.get(o.tensor());
                if (t == null) {
                    throw new IOException(in + ": no tensor \"" + o.tensor() + "\"");
                }
                TensorSlice s;
                try {
                    s = t.slice(o.slice());
                } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), in + ": " + e.getMessage());
                }
                Tensor result = s.to(o.dtype() == null ? t.dtype() : o.dtype(), arena);
                writer.add(o.name(), result.dtype(), result.shape(), result.data());
                bytes += result.byteSize();
            }
            writer.write(out);
            printer.println(Format.fmt("wrote %d tensor(s), %s, to %s", outputs.size(), Format.size(bytes), out));
        } finally {
            if (file != null) {
                file.close();
            }
            if (buffer != null) {
                buffer.close();
            }
        }
        printer.flush();
        return SafetensorsCli.EXIT_OK;
    }

    private List<Output> fromOptions(Map<String, Tensor> source) {
        Predicate<String> take = tensors.isEmpty() ? name -> true : NameGlob.anyOf(tensors);
        SliceRules rules;
        try {
            rules = SliceRules.parse(slices);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        List<Output> out = new ArrayList<>();
        for (String name : source.keySet()) {
            if (!take.test(name)) {
                continue;
            }
            Slice slice = rules.sliceOf(name);
            out.add(new Output(name, name, slice == null ? Slice.whole() : slice, to));
        }
        if (out.isEmpty()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "no tensor of " + in + " matches --tensors "
                    + tensors);
        }
        return out;
    }

    private List<Output> readSpec() throws IOException {
        Map<String, Output> out = new LinkedHashMap<>();
        for (String line : Files.readAllLines(specFile)) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t", -1);
            if (f.length < 3 || f.length > 4) {
                throw new CommandLine.ParameterException(spec.commandLine(), specFile + ": not OUT_NAME<TAB>TENSOR"
                        + "<TAB>SLICE[<TAB>DTYPE]: " + line);
            }
            Dtype dtype = f.length == 4 && !f[3].isBlank() ? Dtype.fromName(f[3].strip()) : null;
            if (f.length == 4 && !f[3].isBlank() && dtype == null) {
                throw new CommandLine.ParameterException(spec.commandLine(), specFile + ": unknown dtype " + f[3]);
            }
            if (out.put(f[0], new Output(f[0], f[1], parseSlice(f[2]), dtype)) != null) {
                throw new CommandLine.ParameterException(spec.commandLine(), specFile + ": output " + f[0] + " twice");
            }
        }
        return List.copyOf(out.values());
    }

    private Slice parseSlice(String text) {
        try {
            return Slice.parse(text);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
