package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.sampler.SamplerConfig;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticDatabase;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The demo's sampler step: generates a small relational database, samples a few batches with the
 * sampler's reference defaults (B = 32, S = 1024) and reports samples/s. Leaves nothing behind.
 */
final class DemoSamplerStep {
    private DemoSamplerStep() {}

    /** Generates about {@code rows} rows from {@code seed} under {@code workDir}, samples, deletes the database. */
    static boolean run(PrintWriter out, Path workDir, int rows, long seed, Progress.Mode progress)
            throws IOException {
        Format.line(out, "");
        Path db = workDir.resolve("sampler-demo-db");
        Format.line(out, "[sampler] relational sampler: a synthetic database of " + Format.count(rows)
                + " rows (users, posts, comments, votes; 3 tasks), then batches of 32 sequences x 1024 cells");
        try {
            long t0 = System.nanoTime();
            SyntheticDatabase.Summary s = SyntheticDatabase.generate(db, Math.max(40, rows), seed,
                    SyntheticDatabase.Embeddings.RANDOM_UNIT);
            Format.line(out, Format.fmt("  generated %s rows, %s FK edges, %s text embeddings in %.2f s",
                    Format.count(s.rows()), Format.count(s.edges()), Format.count(s.textRows()),
                    (System.nanoTime() - t0) / 1e9));
            SamplerConfig config = SamplerConfig.builder().build();
            try (Database d = Database.open(db)) {
                SamplerCommand.Bench.Result r = SamplerCommand.Bench.run(d, config, 3, 10, out, progress);
                Format.line(out, Format.fmt("  sampled 10 train batches on %d threads: %.1f batches/s, %.0f samples/s",
                        config.threads(), r.batchesPerSecond(), r.samplesPerSecond()));
            }
            return true;
        } finally {
            if (Files.exists(db)) {
                try (Stream<Path> walk = Files.walk(db)) {
                    for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                        Files.deleteIfExists(p);
                    }
                }
            }
        }
    }
}
