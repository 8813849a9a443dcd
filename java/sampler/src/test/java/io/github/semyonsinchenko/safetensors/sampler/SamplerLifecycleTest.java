package io.github.semyonsinchenko.safetensors.sampler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SamplerLifecycleTest {
    private static final Duration LIMIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private static SamplerConfig.Builder small() {
        return SamplerConfig.builder().batchSize(4).sequenceLength(256).maxRowsPerSeq(64).threads(2);
    }

    @Test
    void producersDeliverTheReferenceBatchesInOrder() throws Exception {
        Path dir = Fixtures.expected().resolve("batches-B4-S256-R64");
        try (Sampler sampler = Sampler.open(Fixtures.db(), small().build())) {
            for (String name : new String[] {"train-00000", "train-00001", "val-00000", "train-00002", "val-00001"}) {
                try (Batch b = name.startsWith("train") ? sampler.nextTrain() : sampler.nextVal();
                        SafetensorsFile expected = SafetensorsFile.open(dir.resolve(name + ".safetensors"))) {
                    for (Tensor t : expected) {
                        assertEquals(-1, t.data().mismatch(b.data(t.name())), name + " " + t.name());
                    }
                }
            }
        }
    }

    @Test
    void shutdownIsIdempotentAndLaterCallsSayShutDown() throws Exception {
        Sampler sampler = Sampler.open(Fixtures.db(), small().build());
        sampler.nextTrain().close();
        assertTimeoutPreemptively(LIMIT, () -> {
            sampler.shutdown();
            sampler.shutdown();
            sampler.close();
        });
        SamplerShutdownException e = assertThrows(SamplerShutdownException.class, sampler::nextTrain);
        assertTrue(e.getMessage().contains("shut down"), e.getMessage());
        assertThrows(SamplerShutdownException.class, sampler::nextVal);
        assertTrue(!sampler.database().isOpen(), "open() gave the sampler the database, close() closes it");
    }

    @Test
    void rendezvousCapacityZeroShutsDownWithoutHanging() {
        assertTimeoutPreemptively(LIMIT, () -> {
            for (int round = 0; round < 3; round++) {
                Sampler sampler = Sampler.open(Fixtures.db(), small().numPrefetch(0).build());
                if (round > 0) {
                    sampler.nextTrain().close();
                }
                Thread.sleep(50); // let both producers block in their hand-over
                sampler.close();
            }
        });
    }

    @Test
    void blockedConsumerIsWokenByShutdown() throws Exception {
        BatchChannel channel = new BatchChannel("train", 1);
        CompletableFuture<Throwable> consumer = CompletableFuture.supplyAsync(() -> {
            try {
                channel.take();
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        Thread.sleep(100);
        assertTrue(!consumer.isDone(), "the consumer waits for a batch");
        channel.close();
        assertInstanceOf(SamplerShutdownException.class, consumer.get(10, TimeUnit.SECONDS));
    }

    @Test
    void producerFailureReachesTheConsumer() throws Exception {
        BatchChannel channel = new BatchChannel("val", 1);
        channel.fail(new IndexOutOfBoundsException("text index 99 out of range"));
        SamplerException e = assertThrows(SamplerException.class, channel::take);
        assertInstanceOf(IndexOutOfBoundsException.class, e.getCause());
        assertTrue(e.getMessage().contains("val producer failed"), e.getMessage());
    }

    @Test
    void databaseTruncatedUnderARunningSamplerFailsTheConsumerNotTheJvm() throws Exception {
        Path db = Fixtures.copyDb(tmp);
        try (Sampler sampler = Sampler.open(db, small().numPrefetch(0).build())) {
            sampler.nextTrain().close();
            try (Stream<Path> files = Files.list(db.resolve("tables"))) {
                for (Path p : (Iterable<Path>) files::iterator) {
                    try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
                        f.setLength(0);
                    }
                }
            }
            try (RandomAccessFile f = new RandomAccessFile(db.resolve("graph.bin").toFile(), "rw")) {
                f.setLength(0);
            }
            SamplerException failure = assertTimeoutPreemptively(LIMIT, () -> {
                for (int i = 0; i < 5; i++) {
                    try {
                        sampler.nextTrain().close(); // at most one batch was finished before the truncation
                    } catch (SamplerException e) {
                        return e;
                    }
                }
                return null;
            });
            assertTrue(failure != null && !(failure instanceof SamplerShutdownException), String.valueOf(failure));
            assertTrue(failure.getMessage().contains("train producer failed"), failure.getMessage());
            MappedFileFaultException typed = assertInstanceOf(MappedFileFaultException.class, failure.getCause());
            assertTrue(typed.source().endsWith(".bin"), typed.source());
        }
    }

    @Test
    void splitWithoutSeedsOnThisRankFailsFast() throws Exception {
        try (Sampler sampler = Sampler.open(Fixtures.db(), small().splitRatios(1.0f, 0.0f, 0.0f).build())) {
            SamplerException e = assertTimeoutPreemptively(Duration.ofSeconds(5),
                    () -> assertThrows(SamplerException.class, sampler::nextVal));
            assertTrue(e.getMessage().contains("no val seeds on rank 0 of 1"), e.getMessage());
            sampler.nextTrain().close();
        }
    }

    @Test
    void producerAndWorkerThreadsAreDaemons() throws Exception {
        try (Sampler sampler = Sampler.open(Fixtures.db(), small().build())) {
            sampler.nextTrain().close();
            int seen = 0;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("sampler-")) {
                    assertTrue(t.isDaemon(), t.getName());
                    seen++;
                }
            }
            assertTrue(seen >= 3, "two producers and a worker, saw " + seen);
        }
    }

    @Test
    void steadyStateReusesBatchMemory() throws Exception {
        try (Sampler sampler = Sampler.open(Fixtures.db(), small().build())) {
            for (int i = 0; i < 60; i++) {
                sampler.nextTrain().close();
            }
            // Bounded by what can be alive at once, however many batches are drawn: train holds 3 queued,
            // 1 blocked in put and 1 with the consumer; val 3 queued and 1 blocked in put.
            int bound = (3 + 2) + (3 + 1);
            assertTrue(sampler.buffersCreated() <= bound, "created " + sampler.buffersCreated());
        }
    }

    @Test
    void aBorrowedDatabaseStaysOpenAndOneThreadGivesTheSameBatches() throws Exception {
        Path expected = Fixtures.expected().resolve("batches-B4-S256-R64/train-00000.safetensors");
        try (io.github.semyonsinchenko.safetensors.sampler.db.Database db =
                io.github.semyonsinchenko.safetensors.sampler.db.Database.open(Fixtures.db())) {
            try (Sampler sampler = Sampler.of(db, small().threads(1).build());
                    Batch b = sampler.nextTrain(); SafetensorsFile f = SafetensorsFile.open(expected)) {
                for (Tensor t : f) {
                    assertEquals(-1, t.data().mismatch(b.data(t.name())), t.name());
                }
            }
            assertTrue(db.isOpen(), "Sampler.of does not own the database");
            assertEquals(2000, db.numRows());
        }
    }

    @Test
    void configIsValidated() {
        assertThrows(IllegalArgumentException.class, () -> SamplerConfig.builder().sequenceLength(65_536).build());
        assertThrows(IllegalArgumentException.class, () -> SamplerConfig.builder().sequenceLength(0).build());
        assertThrows(IllegalArgumentException.class, () -> SamplerConfig.builder().rank(2, 2).build());
        assertThrows(IllegalArgumentException.class, () -> SamplerConfig.builder().maxRowsPerSeq(0).build());
        assertThrows(IllegalArgumentException.class, () -> SamplerConfig.builder().numPrefetch(-1).build());
        assertThrows(IllegalArgumentException.class, () -> SamplerConfig.builder().threads(0).build());
        SamplerConfig d = SamplerConfig.builder().build();
        assertEquals(0, d.rank());
        assertEquals(1, d.worldSize());
        assertEquals(0.8f, d.trainRatio());
        assertEquals(0.1f, d.valRatio());
        assertEquals(0.1f, d.testRatio());
        assertEquals(123, d.splitSeed());
        assertEquals(42, d.seed());
        assertEquals(3, d.numPrefetch());
        assertEquals(32, d.batchSize());
        assertEquals(1024, d.sequenceLength());
        assertEquals(16, d.bfsChildWidth());
        assertEquals(200, d.maxRowsPerSeq());
        assertEquals(65_535, SamplerConfig.builder().sequenceLength(65_535).build().sequenceLength());
    }
}
