package io.github.semyonsinchenko.safetensors.bench;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Opening a file with many tensors: {@code SafetensorsFile.open} (read + validate the header, map
 * the file), then every tensor's name, dtype, shape and size, then close. The Python peer
 * ({@code bench/python/open_peer.py}) times {@code safe_open} + {@code keys()} + {@code get_slice}
 * metadata on the same file; {@code bench/run-open.sh} runs both and writes the ratio.
 *
 * <p>{@code file} is the file to open; when empty (e.g. when every benchmark of the jar runs), a
 * 10,000-tensor file like the peer's is written to a temporary directory.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx1g"})
public class OpenBench {
    @Param("")
    public String file;

    @Param({"shared", "confined"})
    public String sharing;

    private Path path;
    private Path tempDir;
    private MappedFile.Sharing mode;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        mode = sharing.equals("confined") ? MappedFile.Sharing.CONFINED : MappedFile.Sharing.SHARED;
        if (file.isEmpty()) {
            tempDir = Files.createTempDirectory("open-bench");
            path = write(tempDir.resolve("many.safetensors"), 10_000);
        } else {
            path = Path.of(file);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        if (tempDir != null) {
            Files.deleteIfExists(path);
            Files.deleteIfExists(tempDir);
        }
    }

    /** The measured operation: open, every tensor's metadata, close. */
    @Benchmark
    public long openAndReadEveryTensorsMetadata() throws IOException {
        long sum = 0;
        try (SafetensorsFile f = SafetensorsFile.open(path, mode)) {
            for (Tensor t : f) {
                sum += t.name().length() + t.dtype().ordinal() + t.shape().length + t.byteSize();
            }
        }
        return sum;
    }

    /** The header alone (read 8 + N bytes, parse, validate), without mapping: where open's time goes. */
    @Benchmark
    public long readHeaderOnly() throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            return Header.read(ch, path.toString()).size();
        }
    }

    /** A file shaped like the peer's: layer-style names, mixed dtypes, small tensors, one metadata entry. */
    static Path write(Path target, int tensors) throws IOException {
        String[] kinds = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
            "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "input_layernorm", "post_attention_layernorm", "bias"};
        Dtype[] dtypes = {Dtype.F32, Dtype.F16, Dtype.I64, Dtype.I8};
        SafetensorsWriter w = new SafetensorsWriter().metadata("format", "pt");
        for (int i = 0; i < tensors; i++) {
            Dtype d = dtypes[i % dtypes.length];
            long[] shape = {4, 8};
            w.add("model.layers." + (i / kinds.length) + "." + kinds[i % kinds.length] + ".weight", d, shape,
                    new byte[Math.toIntExact(d.storageBytes(32))]);
        }
        w.write(target);
        return target;
    }
}
