package io.github.semyonsinchenko.safetensors.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "export",
        header = "Write each tensor's raw bytes plus manifest.json (interop).",
        mixinStandardHelpOptions = true,
        description = {
            "Writes every tensor's raw bytes to DIR/<i>.bin (i = position in offset order) and DIR/manifest.json:",
            "  {\"metadata\": {...}, \"tensors\": [{\"name\", \"dtype\", \"shape\", \"data_offsets\", \"file\"}]}",
            "with metadata in file order and tensors in offset order. Bytes are copied straight from the mapped"
                    + " file, exactly as stored (little-endian); manifest.json is written last.",
            "The manifest is also a valid SPEC for 'pack'."
        })
final class ExportCommand implements Callable<Integer> {
    static final String MANIFEST = "manifest.json";
    private static final long MAX_CHUNK = 1L << 30;

    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "FILE", description = "The .safetensors file.")
    Path file;

    @Option(names = "--out", required = true, paramLabel = "DIR",
            description = "Output directory; created if missing, existing files of the same names are replaced.")
    Path outDir;

    @Override
    public Integer call() throws IOException {
        Files.createDirectories(outDir);
        PrintWriter out = spec.commandLine().getOut();
        try (SafetensorsFile st = SafetensorsFile.open(file, MappedFile.Sharing.CONFINED)) {
            // A manifest means a complete export: drop an old one before replacing the files it lists.
            Files.deleteIfExists(outDir.resolve(MANIFEST));
            List<Tensor> tensors = st.tensors();
            for (int i = 0; i < tensors.size(); i++) {
                writeRaw(tensors.get(i).data(), outDir.resolve(i + ".bin"));
            }
            try (OutputStream os = Files.newOutputStream(outDir.resolve(MANIFEST));
                 JsonGenerator g = Json.writer(os)) {
                g.writeStartObject();
                Json.writeStringMap(g, "metadata", st.metadata());
                g.writeArrayFieldStart("tensors");
                for (int i = 0; i < tensors.size(); i++) {
                    g.writeStartObject();
                    Json.writeTensorFields(g, tensors.get(i).info());
                    g.writeStringField("file", i + ".bin");
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeEndObject();
                g.writeRaw('\n');
            }
            out.println("exported " + tensors.size() + " tensors (" + Format.count(st.header().dataSize())
                    + " bytes) and " + MANIFEST + " to " + outDir);
        }
        out.flush();
        return SafetensorsCli.EXIT_OK;
    }

    /** Writes a segment to a new file through the channel, in chunks a ByteBuffer can address. */
    static void writeRaw(MemorySegment data, Path target) throws IOException {
        try (FileChannel ch = FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            long size = data.byteSize();
            for (long off = 0; off < size; off += MAX_CHUNK) {
                ByteBuffer buf = data.asSlice(off, Math.min(MAX_CHUNK, size - off)).asByteBuffer();
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
            }
        }
    }
}
