package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "convert",
        header = "Convert float tensors to F32, F16 or BF16 with the SIMD kernels.",
        mixinStandardHelpOptions = true,
        description = {
            "Writes OUTPUT with every float tensor of INPUT (F16, BF16, F32, F64) converted to --to; other"
                    + " tensors and __metadata__ are copied unchanged. Tensors are streamed from the mapped input"
                    + " through the Kernels facade in chunks, never held whole in memory; OUTPUT is replaced atomically.",
            "Rounding is round-to-nearest-even unless --rounding trunc (toward zero, F32 -> F16/BF16 only)."
                    + " F64 -> F16/BF16 has no single-rounding kernel: such tensors are kept and listed.",
        })
final class ConvertCommand implements Callable<Integer> {
    private static final Set<Dtype> TARGETS = Set.of(Dtype.F32, Dtype.F16, Dtype.BF16);
    private static final Set<Dtype> FLOATS = Set.of(Dtype.F16, Dtype.BF16, Dtype.F32, Dtype.F64);
    private static final long CHUNK_ELEMENTS = 1 << 20;

    enum Rounding { rne, trunc }

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "INPUT")
    Path input;

    @Parameters(index = "1", paramLabel = "OUTPUT")
    Path output;

    @Option(names = "--to", required = true, paramLabel = "DTYPE", description = "F32, F16 or BF16.")
    Dtype target;

    @Option(names = "--rounding", defaultValue = "rne", description = "rne (default) or trunc.")
    Rounding rounding;

    @Option(names = "--widen-integers", description = "With --to F32, also convert integer tensors (numpy astype(float32)).")
    boolean widenIntegers;

    @Override
    public Integer call() throws IOException {
        if (!TARGETS.contains(target)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--to must be F32, F16 or BF16, not " + target);
        }
        if (rounding == Rounding.trunc && target == Dtype.F32) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--rounding trunc applies to F32 -> F16/BF16 only");
        }
        if (widenIntegers && target != Dtype.F32) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--widen-integers needs --to F32");
        }
        PrintWriter out = spec.commandLine().getOut();
        List<String> kept = new ArrayList<>();
        int converted = 0;
        try (SafetensorsFile in = SafetensorsFile.open(input, MappedFile.Sharing.CONFINED);
                Arena arena = Arena.ofConfined()) {
            MemorySegment staging = arena.allocate(CHUNK_ELEMENTS * 4, 64);
            SafetensorsWriter writer = new SafetensorsWriter().metadata(in.metadata());
            for (Tensor t : in) {
                Conversion c = conversion(t.dtype());
                if (c == null) {
                    if (FLOATS.contains(t.dtype()) && t.dtype() != target) {
                        kept.add(t.name() + " (" + t.dtype() + ")");
                    }
                    writer.add(t.name(), t.dtype(), t.shape(), t.data());
                } else {
                    writer.add(t.name(), target, t.shape(), channel -> stream(c, t.data(), staging, channel));
                    converted++;
                }
            }
            writer.write(output);
        }
        out.printf(Locale.ROOT, "converted %d tensor(s) to %s (%s) with %s%n", converted, target, rounding, Kernels.description());
        if (!kept.isEmpty()) {
            out.println("kept unchanged, no single-rounding kernel: " + String.join(", ", kept));
        }
        out.flush();
        return SafetensorsCli.EXIT_OK;
    }

    /** The kernel from {@code source} to the target, or null to copy the tensor as it is. */
    private Conversion conversion(Dtype source) {
        if (source == target || !(FLOATS.contains(source) || widenIntegers)) {
            return null;
        }
        return Conversion.of(source, target, rounding == Rounding.trunc).orElse(null);
    }

    /** Converts {@code src} chunk by chunk into the staging buffer and writes each chunk. */
    private static void stream(Conversion c, MemorySegment src, MemorySegment staging, WritableByteChannel channel)
            throws IOException {
        long total = src.byteSize() / c.sourceBytes();
        for (long i = 0; i < total; i += CHUNK_ELEMENTS) {
            long n = Math.min(CHUNK_ELEMENTS, total - i);
            MemorySegment dst = staging.asSlice(0, n * c.targetBytes());
            Kernels.convert(c, src.asSlice(i * c.sourceBytes(), n * c.sourceBytes()), dst, n);
            ByteBuffer buf = dst.asByteBuffer();
            while (buf.hasRemaining()) {
                channel.write(buf);
            }
        }
    }
}
