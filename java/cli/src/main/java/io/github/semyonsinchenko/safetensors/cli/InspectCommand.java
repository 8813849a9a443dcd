package io.github.semyonsinchenko.safetensors.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.channels.FileChannel;
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
        name = "inspect",
        header = "Print a file's tensor table, metadata and header length.",
        mixinStandardHelpOptions = true,
        description = {
            "Prints a file's header: the tensor table (name, dtype, shape, bytes, data_offsets) in offset order,"
                    + " the __metadata__ entries in file order, and the header length.",
            "The whole header and the file size are validated; tensor data is not read."
        })
final class InspectCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "FILE", description = "The .safetensors file.")
    Path file;

    @Option(names = "--json", description = "Print one JSON object instead of text (data_offsets are relative to"
            + " the data section, as in the header).")
    boolean json;

    @Override
    public Integer call() throws IOException {
        Header header;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            header = Header.read(ch, file.toString());
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            printJson(out, header);
        } else {
            printText(out, header);
        }
        out.flush();
        return SafetensorsCli.EXIT_OK;
    }

    private void printText(PrintWriter out, Header h) {
        out.println(file);
        out.println("  file size:     " + Format.count(h.fileSize()) + " bytes (" + Format.size(h.fileSize()) + ")");
        out.println("  header length: " + Format.count(h.headerLength()) + " bytes (data section starts at byte "
                + Format.count(h.dataOffset()) + ")");
        out.println("  data section:  " + Format.count(h.dataSize()) + " bytes in " + h.size()
                + (h.size() == 1 ? " tensor" : " tensors"));
        out.println("  metadata:      " + h.metadata().size() + (h.metadata().size() == 1 ? " entry" : " entries"));
        Format.printMetadata(out, h.metadata(), "    ");
        if (h.size() > 0) {
            out.println("  tensors (offset order):");
            Format.printTensorTable(out, h, "    ", null, List.of());
        }
    }

    private void printJson(PrintWriter out, Header h) throws IOException {
        try (JsonGenerator g = Json.writer(out)) {
            g.writeStartObject();
            g.writeStringField("file", file.toString());
            g.writeNumberField("file_size", h.fileSize());
            g.writeNumberField("header_length", h.headerLength());
            g.writeNumberField("data_offset", h.dataOffset());
            g.writeNumberField("data_size", h.dataSize());
            Json.writeStringMap(g, "metadata", h.metadata());
            g.writeArrayFieldStart("tensors");
            for (TensorInfo t : h.tensors()) {
                g.writeStartObject();
                Json.writeTensorFields(g, t);
                g.writeNumberField("bytes", t.byteSize());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        out.println();
    }
}
