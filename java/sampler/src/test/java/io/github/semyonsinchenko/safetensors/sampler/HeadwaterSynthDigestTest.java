package io.github.semyonsinchenko.safetensors.sampler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.Layouts;
import io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticDatabase;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * headwater read a database written by {@link SyntheticDatabase} and produced batches whose tensor
 * digests are in {@code headwater-synth/} (see its README); we regenerate the same database and
 * must produce the same digests.
 */
class HeadwaterSynthDigestTest {
    @TempDir
    Path tmp;

    @Test
    void ourBatchesOnAGeneratedDatabaseMatchHeadwaters() throws Exception {
        Path expected = Path.of(getClass().getResource("/headwater-synth/train-digests-B8-S1024.txt").toURI());
        Path db = SyntheticDatabase.generate(tmp.resolve("db"), 20_000, 3, SyntheticDatabase.Embeddings.RANDOM_UNIT)
                .dir();
        List<String> ours = new ArrayList<>();
        SamplerConfig config = SamplerConfig.builder().batchSize(8).sequenceLength(1024).threads(2).build();
        try (Database d = Database.open(db); BatchBuilder builder = new BatchBuilder(d, config)) {
            BatchBuilder.Stream train = builder.stream(Split.TRAIN);
            for (int i = 0; i < 2; i++) {
                try (Batch b = train.next()) {
                    ours.add("batch " + i + " task_idx " + b.taskIdx() + " U " + b.uniqueTexts());
                    for (BatchTensor t : b.tensors()) {
                        if (!t.name().equals(Batch.TARGET_STYPE) && !t.name().equals(Batch.TASK_IDX)) {
                            ours.add(t.name() + " " + String.format(Locale.ROOT, "%016x", fnv(t.data())));
                        }
                    }
                }
            }
        }
        assertEquals(Files.readAllLines(expected), ours);
    }

    private static long fnv(MemorySegment data) {
        long h = 0xcbf29ce484222325L;
        for (long k = 0; k < data.byteSize(); k++) {
            h ^= data.get(Layouts.U8, k) & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }
}
