package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The demo's steps 2 and 3: times {@link SafetensorsFile#open} (header read, every rule checked,
 * file mapped), then compares every tensor of the file byte for byte with its regenerated contents
 * and prints the tensor table with each tensor's result.
 */
final class DemoVerifyStep {
    private DemoVerifyStep() {}

    /** Whether {@code file} holds exactly {@code plan} and {@code metadata}, as {@code written} says. */
    static boolean run(PrintWriter out, Path file, List<DemoData.Planned> plan, Map<String, String> metadata,
            Header written) throws IOException {
        Format.line(out, "");
        long t0 = System.nanoTime();
        SafetensorsFile first = SafetensorsFile.open(file);
        long firstNs = System.nanoTime() - t0;
        first.close();
        long bestNs = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            long t = System.nanoTime();
            SafetensorsFile f = SafetensorsFile.open(file);
            bestNs = Math.min(bestNs, System.nanoTime() - t);
            f.close();
        }
        Format.line(out, Format.fmt("[2/4] open + validate: SafetensorsFile.open read the %s-byte header, checked"
                + " every rule and mapped %s in %.2f ms (first open, incl. class loading: %.2f ms)",
                Format.count(written.headerLength()), Format.size(written.fileSize()), bestNs / 1e6, firstNs / 1e6));

        Format.line(out, "");
        Format.line(out, "[3/4] verify: every tensor compared byte for byte with its regenerated contents");
        boolean ok = true;
        long checked = 0;
        long start = System.nanoTime();
        try (SafetensorsFile f = SafetensorsFile.open(file, MappedFile.Sharing.CONFINED);
             Arena arena = Arena.ofConfined()) {
            if (!f.metadata().equals(metadata)) {
                Format.line(out, "  metadata differs: wrote " + metadata + ", read " + f.metadata());
                ok = false;
            }
            if (!f.header().tensors().equals(written.tensors())) {
                Format.line(out, "  the tensor table read back differs from the one written");
                ok = false;
            }
            MemorySegment buf = arena.allocate(DemoData.BUFFER_BYTES, 8);
            List<String> results = new ArrayList<>();
            for (Tensor t : f) {
                DemoData.Planned p = plan.stream().filter(q -> q.name().equals(t.name())).findFirst().orElse(null);
                String result = p == null ? "unexpected tensor" : check(t, p, buf);
                ok &= result.equals("ok");
                checked += t.byteSize();
                results.add(result);
            }
            if (f.size() != plan.size()) {
                Format.line(out, "  the file has " + f.size() + " tensors, " + plan.size() + " were written");
                ok = false;
            }
            double secs = (System.nanoTime() - start) / 1e9;
            Format.line(out, "  metadata: " + f.metadata());
            Format.printTensorTable(out, f.header(), "  ", "verified", results);
            Format.line(out, Format.fmt("  %s: %d tensors, %s bytes compared in %.2f s", ok ? "all equal" : "MISMATCH",
                    f.size(), Format.count(checked), secs));
        }
        out.flush();
        return ok;
    }

    /** "ok", or where the mapped bytes first differ from the regenerated ones. */
    private static String check(Tensor t, DemoData.Planned p, MemorySegment buf) {
        if (t.dtype() != p.dtype() || !Arrays.equals(t.shape(), p.shape())) {
            return "dtype/shape differ";
        }
        MemorySegment data = t.data();
        DemoData.Stream s = new DemoData.Stream(p);
        long off = 0;
        while (s.remaining() > 0) {
            long n = s.next(buf);
            long at = MemorySegment.mismatch(buf, 0, n, data, off, off + n);
            if (at >= 0) {
                return "differs at byte " + (off + at);
            }
            off += n;
        }
        return off == data.byteSize() ? "ok" : "length differs";
    }
}
