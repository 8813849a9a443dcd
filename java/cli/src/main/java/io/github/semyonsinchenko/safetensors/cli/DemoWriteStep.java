package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The demo's step 1: generates the planned tensors off-heap and streams them into the file with
 * {@link SafetensorsWriter}, printing a line per tensor and the write rate.
 */
final class DemoWriteStep {
    private DemoWriteStep() {}

    /** Writes {@code plan} with {@code metadata} into {@code file}; returns the header written. */
    static Header run(PrintWriter out, Path file, List<DemoData.Planned> plan, Map<String, String> metadata)
            throws IOException {
        long total = plan.stream().mapToLong(DemoData.Planned::bytes).sum();
        Format.line(out, "");
        Format.line(out, "[1/4] write: " + plan.size() + " tensors, " + Format.count(total) + " data bytes ("
                + Format.size(total) + "), generated off-heap in " + Format.size(DemoData.BUFFER_BYTES)
                + " chunks and streamed by SafetensorsWriter (sibling temp file, fsync, atomic rename)");
        SafetensorsWriter writer = new SafetensorsWriter().metadata(metadata);
        long[] done = {0, 0}; // tensors, bytes
        Format.line(out, "  tensors done  bytes done  name" + " ".repeat(38)
                + " dtype shape                    size  avg rate");
        long start = System.nanoTime();
        Header header;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(DemoData.BUFFER_BYTES, 8);
            for (DemoData.Planned p : plan) {
                writer.add(p.name(), p.dtype(), p.shape(), channel -> {
                    DemoData.Stream s = new DemoData.Stream(p);
                    while (s.remaining() > 0) {
                        long n = s.next(buf);
                        ByteBuffer bb = buf.asSlice(0, n).asByteBuffer();
                        while (bb.hasRemaining()) {
                            channel.write(bb);
                        }
                    }
                    done[0]++;
                    done[1] += p.bytes();
                    double secs = (System.nanoTime() - start) / 1e9;
                    Format.line(out, Format.fmt("  [%2d/%d]       %5.1f%%     %-42s %-5s %-18s %10s  %5.0f MB/s",
                            done[0], plan.size(), total == 0 ? 100.0 : 100.0 * done[1] / total, p.name(), p.dtype(),
                            Arrays.toString(p.shape()), Format.size(p.bytes()), done[1] / 1e6 / secs));
                });
            }
            header = writer.write(file);
        }
        double secs = (System.nanoTime() - start) / 1e9;
        Format.line(out, Format.fmt("  wrote %s bytes in %.2f s (%.0f MB/s including generation and fsync); header %s"
                + " bytes", Format.count(header.fileSize()), secs, header.fileSize() / 1e6 / secs,
                Format.count(header.headerLength())));
        return header;
    }
}
