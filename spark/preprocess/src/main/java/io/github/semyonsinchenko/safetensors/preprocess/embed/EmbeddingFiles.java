package io.github.semyonsinchenko.safetensors.preprocess.embed;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.partition.Parts;
import io.github.semyonsinchenko.safetensors.preprocess.stats.CategoricalVocabulary;
import io.github.semyonsinchenko.safetensors.preprocess.text.TextVocabulary;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionWriter;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.function.Function2;

/**
 * Stage 4, the three embedding files: column and categorical strings (few) are embedded on the
 * driver; text strings by the executors, partition by partition in vocabulary order.
 */
public final class EmbeddingFiles {
    private EmbeddingFiles() {}

    /** Writes the column, categorical and text embedding files. */
    public static void write(BuildContext ctx, List<LoadedTable> tables, CategoricalVocabulary categorical,
            TextVocabulary text) throws IOException {
        List<String> columnStrings = new ArrayList<>();
        for (LoadedTable t : tables) {
            for (InputSchema.Column c : t.schema().columns()) {
                columnStrings.add(c.description() != null ? c.name() + " of " + t.schema().name() + ": " + c.description()
                        : c.name() + " of " + t.schema().name());
            }
        }
        embedOnDriver(ctx, columnStrings, ctx.work.resolve(DatabaseLayout.COLUMN_EMBEDDINGS_FILE));
        embedOnDriver(ctx, categorical.strings(), ctx.work.resolve(DatabaseLayout.CATEGORICAL_EMBEDDINGS_FILE));
        Path textFile = ctx.work.resolve(DatabaseLayout.TEXT_EMBEDDINGS_FILE);
        if (text.ordered() == null || ctx.options.embedder().kind() == EmbedderSpec.Kind.NONE) {
            zeros(textFile, text.size() * DatabaseLayout.EMBEDDING_ROW_BYTES);
            return;
        }
        Path dir = ctx.parts.resolve("text-embeddings");
        List<Parts.Info> infos = text.ordered().mapPartitionsWithIndex(
                new EmbedPartition(ctx.options.embedder(), dir.toString()), true).collect();
        try (SectionWriter w = DatabaseWriter.openEmbeddings(textFile, text.size())) {
            for (Path part : Parts.files(dir, 0, Parts.inOrder(infos))) {
                w.appendBytes(part);
            }
            w.finish();
        }
        ctx.info(String.format(Locale.ROOT, "embedded %d text strings in %d partitions", text.size(), infos.size()));
    }

    /**
     * A file of {@code n} zero bytes, made by setting its length: the file system reads the bytes
     * never written as zeros (a hole), so the ~500 bytes per text string (1.5 GB for 3 M strings)
     * are neither written nor stored.
     */
    static void zeros(Path file, long n) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(0);
            f.setLength(n);
        }
    }

    private static void embedOnDriver(BuildContext ctx, List<String> strings, Path file) throws IOException {
        short[] rows = new short[strings.size() * Embedder.DIM];
        try (Embedder e = ctx.options.embedder().create()) {
            e.embed(strings, rows, 0);
        }
        try (SectionWriter w = DatabaseWriter.openEmbeddings(file, strings.size())) {
            w.u16s(rows, 0, rows.length);
            w.finish();
        }
    }

    /** Embeds a partition of vocabulary strings, in order, into one part of F16 rows. */
    private record EmbedPartition(EmbedderSpec spec, String dir)
            implements Function2<Integer, Iterator<String>, Iterator<Parts.Info>> {
        @Override
        public Iterator<Parts.Info> call(Integer partition, Iterator<String> strings) throws IOException {
            int chunk = spec.batchSize() * 8;
            List<String> batch = new ArrayList<>(chunk);
            short[] rows = new short[chunk * Embedder.DIM];
            long n = 0;
            try (Embedder e = spec.create(); Parts.Out out = new Parts.Out(dir, partition, 1)) {
                SectionWriter s = out.section(0);
                while (strings.hasNext()) {
                    batch.add(strings.next());
                    if (batch.size() == chunk || !strings.hasNext()) {
                        e.embed(batch, rows, 0);
                        s.u16s(rows, 0, batch.size() * Embedder.DIM);
                        n += batch.size();
                        batch.clear();
                    }
                }
                return List.of(out.commit(n)).iterator();
            }
        }
    }
}
