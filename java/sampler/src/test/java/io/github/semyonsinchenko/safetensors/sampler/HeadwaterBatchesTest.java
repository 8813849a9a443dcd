package io.github.semyonsinchenko.safetensors.sampler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Our batches equal headwater's, bit for bit, every tensor, for the three fixture configurations
 * (first train and val batches of one sampler), on one and on two threads.
 */
class HeadwaterBatchesTest {

    @ParameterizedTest(name = "{0} threads={7}")
    @CsvSource({
        "batches-B4-S256-R64, 4, 256, 64, 42, 0, 1, 1, 4, 2",
        "batches-B4-S256-R64, 4, 256, 64, 42, 0, 1, 2, 4, 2",
        "batches-B2-S1024, 2, 1024, 200, 42, 0, 1, 1, 2, 1",
        "batches-B2-S1024, 2, 1024, 200, 42, 0, 1, 2, 2, 1",
        "batches-B3-S128-R32-rank1of2-seed7, 3, 128, 32, 7, 1, 2, 1, 2, 1",
        "batches-B3-S128-R32-rank1of2-seed7, 3, 128, 32, 7, 1, 2, 2, 2, 1",
    })
    void batchesEqualHeadwaters(String folder, int b, int s, int r, long seed, int rank, int world, int threads,
            int trainCount, int valCount) throws IOException {
        SamplerConfig config = SamplerConfig.builder().batchSize(b).sequenceLength(s).maxRowsPerSeq(r).seed(seed)
                .rank(rank, world).threads(threads).build();
        Path dir = Fixtures.expected().resolve(folder);
        try (Database db = Database.open(Fixtures.db()); BatchBuilder builder = new BatchBuilder(db, config)) {
            compareStream(builder.stream(Split.TRAIN), dir, "train", trainCount);
            compareStream(builder.stream(Split.VAL), dir, "val", valCount);
        }
    }

    /** The comparison can fail: another sampling seed gives other batches. */
    @org.junit.jupiter.api.Test
    void anotherSeedGivesOtherBatches() throws IOException {
        SamplerConfig config = SamplerConfig.builder().batchSize(4).sequenceLength(256).maxRowsPerSeq(64).seed(43)
                .threads(1).build();
        Path file = Fixtures.expected().resolve("batches-B4-S256-R64/train-00000.safetensors");
        try (Database db = Database.open(Fixtures.db()); BatchBuilder builder = new BatchBuilder(db, config);
                Batch batch = builder.stream(Split.TRAIN).next(); SafetensorsFile expected = SafetensorsFile.open(file)) {
            int differing = 0;
            for (Tensor t : expected) {
                BatchTensor ours = batch.tensor(t.name());
                if (t.data().byteSize() != ours.data().byteSize() || t.data().mismatch(ours.data()) >= 0) {
                    differing++;
                }
            }
            assertTrue(differing > 0);
        }
    }

    private static void compareStream(BatchBuilder.Stream stream, Path dir, String prefix, int count)
            throws IOException {
        for (int n = 0; n < count; n++) {
            Path file = dir.resolve(String.format(java.util.Locale.ROOT, "%s-%05d.safetensors", prefix, n));
            try (Batch batch = stream.next(); SafetensorsFile expected = SafetensorsFile.open(file)) {
                Set<String> names = new HashSet<>();
                for (Tensor t : expected) {
                    names.add(t.name());
                    BatchTensor ours = batch.tensor(t.name());
                    String where = file.getFileName() + " " + t.name();
                    assertEquals(t.dtype(), ours.dtype(), where);
                    assertArrayEquals(t.shape(), ours.shape(), where);
                    long mismatch = t.data().mismatch(ours.data());
                    assertEquals(-1, mismatch, () -> where + ": first differing byte at " + mismatch);
                }
                for (BatchTensor t : batch.tensors()) {
                    assertTrue(names.contains(t.name()), "headwater has no tensor " + t.name());
                }
            }
        }
    }
}
