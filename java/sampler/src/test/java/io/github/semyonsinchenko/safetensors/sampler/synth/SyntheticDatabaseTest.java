package io.github.semyonsinchenko.safetensors.sampler.synth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.sampler.Batch;
import io.github.semyonsinchenko.safetensors.sampler.Sampler;
import io.github.semyonsinchenko.safetensors.sampler.SamplerConfig;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.Layouts;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.TableMetadata;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SyntheticDatabaseTest {
    @TempDir
    Path tmp;

    @Test
    void generatedDatabaseOpensAndSamples() throws Exception {
        SyntheticDatabase.Summary s = SyntheticDatabase.generate(tmp.resolve("db"), 3000, 7,
                SyntheticDatabase.Embeddings.RANDOM_UNIT);
        assertEquals(3000, s.rows());
        assertTrue(s.edges() > 2 * 3000, "about 2.1 edges per row, got " + s.edges());
        try (Database db = Database.open(s.dir())) {
            assertEquals(4, db.numTables());
            assertEquals(3, db.numTasks());
            assertEquals(s.edges(), db.graph().numEdges());
            Set<SemanticType> stypes = EnumSet.noneOf(SemanticType.class);
            db.metadata().columns().forEach(c -> stypes.add(c.stype()));
            assertEquals(EnumSet.allOf(SemanticType.class), stypes);
            Set<SemanticType> targets = EnumSet.noneOf(SemanticType.class);
            db.metadata().tasks().forEach(t -> targets.add(t.targetStype()));
            assertEquals(EnumSet.of(SemanticType.NUMERICAL, SemanticType.BOOLEAN, SemanticType.CATEGORICAL), targets);
            for (TableMetadata t : db.metadata().tables()) {
                assertTrue(t.hasTemporalColumn() && t.pkeyCol() == t.colStart(), t.name());
            }
            // unit-norm embeddings (f16 rounding aside)
            MemorySegment row = db.textEmbeddings().row(5);
            double norm = 0;
            for (int i = 0; i < DatabaseLayout.EMBEDDING_DIM; i++) {
                float x = Float.float16ToFloat(row.get(Layouts.U16, 2L * i));
                norm += x * x;
            }
            assertEquals(1.0, Math.sqrt(norm), 1e-2);
        }
        SamplerConfig config = SamplerConfig.builder().batchSize(8).sequenceLength(512).threads(2).build();
        try (Sampler sampler = Sampler.open(s.dir(), config)) {
            for (int i = 0; i < 6; i++) {
                try (Batch b = i % 2 == 0 ? sampler.nextTrain() : sampler.nextVal()) {
                    assertTrue(b.cells(0) > 0);
                    int targets = 0;
                    MemorySegment isTarget = b.data(Batch.IS_TARGET);
                    for (long k = 0; k < isTarget.byteSize(); k++) {
                        targets += isTarget.get(Layouts.U8, k);
                    }
                    assertEquals(8, targets, "one target cell per sequence");
                }
            }
        }
    }

    @Test
    void deterministicForASeedAndZeroEmbeddingsAreZero() throws IOException {
        Path a = SyntheticDatabase.generate(tmp.resolve("a"), 500, 3, SyntheticDatabase.Embeddings.ZERO).dir();
        Path b = SyntheticDatabase.generate(tmp.resolve("b"), 500, 3, SyntheticDatabase.Embeddings.ZERO).dir();
        try (Stream<Path> files = Files.walk(a)) {
            for (Path p : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                assertArrayEquals(Files.readAllBytes(p), Files.readAllBytes(b.resolve(a.relativize(p).toString())),
                        p.toString());
            }
        }
        byte[] text = Files.readAllBytes(a.resolve(DatabaseLayout.TEXT_EMBEDDINGS_FILE));
        assertTrue(text.length > 0);
        for (byte x : text) {
            assertEquals(0, x);
        }
    }

    @Test
    void refusesAnExistingDirectoryAndTinySizesLeavingNothing() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("exists"));
        assertThrows(IOException.class, () -> SyntheticDatabase.generate(dir, 100, 1, SyntheticDatabase.Embeddings.ZERO));
        assertThrows(IllegalArgumentException.class,
                () -> SyntheticDatabase.generate(tmp.resolve("tiny"), 10, 1, SyntheticDatabase.Embeddings.ZERO));
        try (Stream<Path> left = Files.list(tmp)) {
            assertEquals(1, left.count(), "only the pre-existing directory");
        }
    }
}
