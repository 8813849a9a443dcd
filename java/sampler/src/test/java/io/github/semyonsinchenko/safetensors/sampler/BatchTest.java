package io.github.semyonsinchenko.safetensors.sampler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.Layouts;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BatchTest {
    @TempDir
    Path tmp;

    private static SamplerConfig.Builder small() {
        return SamplerConfig.builder().batchSize(4).sequenceLength(256).maxRowsPerSeq(64).threads(1);
    }

    @Test
    void writesItselfAsSafetensorsWithTheDictKeys() throws IOException {
        try (Database db = Database.open(Fixtures.db()); BatchBuilder builder = new BatchBuilder(db, small().build());
                Batch batch = builder.stream(Split.TRAIN).next()) {
            Path file = tmp.resolve("batch.safetensors");
            batch.writeTo(file);
            Path viaChannel = tmp.resolve("channel.safetensors");
            try (var out = Channels.newChannel(Files.newOutputStream(viaChannel))) {
                batch.writeTo(out);
            }
            assertEquals(Files.size(file), Files.size(viaChannel));
            try (SafetensorsFile f = SafetensorsFile.open(file)) {
                assertEquals(batch.tensors().size(), f.size());
                for (BatchTensor t : batch.tensors()) {
                    Tensor read = f.tensor(t.name());
                    assertEquals(t.dtype(), read.dtype());
                    assertEquals(List.of(boxed(t.shape())), List.of(boxed(read.shape())));
                    assertEquals(-1, read.data().mismatch(t.data()), t.name());
                }
            }
            assertEquals(Dtype.F16, batch.tensor(Batch.TEXT_BATCH_EMBEDDINGS).dtype());
            assertEquals(batch.uniqueTexts(), batch.tensor(Batch.TEXT_BATCH_EMBEDDINGS).shape()[0]);
        }
    }

    private static Long[] boxed(long[] a) {
        Long[] b = new Long[a.length];
        for (int i = 0; i < a.length; i++) {
            b[i] = a[i];
        }
        return b;
    }

    @Test
    void categoricalRangeIsOptIn() throws IOException {
        try (Database db = Database.open(Fixtures.db())) {
            try (BatchBuilder plain = new BatchBuilder(db, small().build());
                    Batch b = plain.stream(Split.TRAIN).next()) {
                assertThrows(java.util.NoSuchElementException.class, () -> b.tensor(Batch.CAT_EMB_START));
                assertEquals(18, b.tensors().size());
            }
            try (BatchBuilder withRange = new BatchBuilder(db, small().emitCategoricalRange(true).build())) {
                BatchBuilder.Stream s = withRange.stream(Split.TRAIN);
                boolean sawCategorical = false;
                for (int i = 0; i < 20; i++) {
                    try (Batch b = s.next()) {
                        int start = b.data(Batch.CAT_EMB_START).get(Layouts.U32, 0);
                        int count = b.data(Batch.CAT_EMB_COUNT).get(Layouts.U32, 0);
                        if (b.targetStype() == SemanticType.CATEGORICAL) {
                            ColumnStats.Categorical c = (ColumnStats.Categorical)
                                    db.metadata().tasks().get(b.taskIdx()).targetStats();
                            assertEquals(c.catEmbStart(), start);
                            assertEquals(c.categories().size(), count);
                            assertTrue(count > 0);
                            sawCategorical = true;
                        } else {
                            assertEquals(0, start);
                            assertEquals(0, count);
                        }
                    }
                }
                assertTrue(sawCategorical);
            }
        }
    }

    @Test
    void closedBatchRefusesAccessAndItsMemoryIsReused() throws IOException {
        try (Database db = Database.open(Fixtures.db()); BatchBuilder builder = new BatchBuilder(db, small().build())) {
            BatchBuilder.Stream s = builder.stream(Split.TRAIN);
            Batch b = s.next();
            b.close();
            b.close();
            assertThrows(IllegalStateException.class, b::tensors);
            for (int i = 0; i < 10; i++) {
                s.next().close();
            }
            assertEquals(1, builder.buffersCreated());
        }
    }
}
