package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.loader.LoadStats;
import io.github.semyonsinchenko.safetensors.loader.LoadedTensor;
import io.github.semyonsinchenko.safetensors.loader.LoaderConfig;
import io.github.semyonsinchenko.safetensors.loader.MetadataCache;
import io.github.semyonsinchenko.safetensors.loader.SafetensorsLoader;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * The demo's loader step: loads the file through the chunked loader (Hadoop's local file system,
 * as it would an HDFS or S3 path) and through its legacy one-request-per-tensor path, checks every
 * tensor against the mapping, and reports requests and MB/s of both in the same run.
 */
final class DemoLoaderStep {
    private static final long CHUNK_BYTES = 64L << 20;

    private DemoLoaderStep() {}

    /** Whether both paths handed out every tensor of {@code file} with the mapping's bytes. */
    static boolean run(PrintWriter out, Path file) throws IOException {
        Format.line(out, "");
        Format.line(out, "[loader] the same file through the chunked loader (Hadoop file://, 64 MiB chunks) and its"
                + " legacy one-request-per-tensor path; every tensor compared with the mapping");
        Format.line(out, "  path      chunks  requests       bytes   seconds      MB/s  tensors checked");
        boolean ok = true;
        // Untimed warm-up: the first load starts Hadoop's file system and loads the read path's classes.
        try (SafetensorsLoader warmUp = SafetensorsLoader.open(LoaderConfig.builder().legacy(true)
                .metadataCache(new MetadataCache(0)).build(), file.toUri().toString())) {
            for (LoadedTensor t : warmUp) {
                t.close();
            }
        }
        try (SafetensorsFile mapped = SafetensorsFile.open(file)) {
            for (boolean legacy : new boolean[] {false, true}) {
                LoaderConfig config = LoaderConfig.builder().chunkBytes(CHUNK_BYTES).legacy(legacy)
                        .metadataCache(new MetadataCache(0)).build();
                int checked = 0;
                try (SafetensorsLoader loader = SafetensorsLoader.open(config, file.toUri().toString())) {
                    LoadedTensor t;
                    while ((t = loader.next()) != null) {
                        try (LoadedTensor closing = t) {
                            MemorySegment expected = mapped.tensor(t.name()).data();
                            if (expected.mismatch(t.data()) >= 0) {
                                Format.line(out, "  tensor " + t.name() + " differs from the mapping");
                                ok = false;
                            }
                            checked++;
                        }
                    }
                    LoadStats s = loader.stats();
                    Format.line(out, Format.fmt("  %-8s %7d %9d %11s %9.2f %9.1f  %d of %d",
                            legacy ? "legacy" : "chunked", loader.plan().chunks().size(),
                            s.dataRequests() + s.headerRequests(), Format.size(s.dataBytes()), s.seconds(),
                            s.megabytesPerSecond(), checked, mapped.size()));
                    ok &= checked == mapped.size();
                }
            }
        }
        Format.line(out, "  (local disk, page cache warm: the request count is what matters on HDFS or S3, where"
                + " each costs a round trip)");
        return ok;
    }
}
