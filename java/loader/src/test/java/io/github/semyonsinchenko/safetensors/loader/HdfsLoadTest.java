package io.github.semyonsinchenko.safetensors.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.testkit.MiniHdfs;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The loader on a real HDFS (MiniDFSCluster in its own class loader, from the HDFS test kit). */
class HdfsLoadTest {
    @TempDir
    Path tmp;

    @Test
    void loadsAShardedCheckpointFromHdfsBitExact() throws Exception {
        List<Path> files = TestCheckpoints.write(tmp.resolve("local"), 2, 50, 20_000, 31);
        Map<String, byte[]> reference = TestCheckpoints.reference(files);
        try (MiniHdfs hdfs = MiniHdfs.start(tmp.resolve("dfs"))) {
            Configuration conf = new Configuration();
            String dir = hdfs.uri() + "/models/ckpt";
            try (FileSystem fs = FileSystem.newInstance(URI.create(hdfs.uri()), conf)) {
                for (Path p : files) {
                    try (var out = fs.create(new org.apache.hadoop.fs.Path(dir + "/" + p.getFileName()))) {
                        Files.copy(p, out);
                    }
                }
            }
            // Selected tensors, sliced, on HDFS: what core's slice of the local file holds, reading only that.
            TensorSelection sel = TensorSelection.globs("layer0.*", "layer1.1*")
                    .slices(t -> t.dim(0) > 4 ? io.github.semyonsinchenko.safetensors.io.Slice.parse("2:-2") : null);
            Map<String, byte[]> wantSliced = SliceLoadTest.expected(files, sel);
            LoaderConfig sliced = LoaderConfig.builder().hadoopConf(conf).metadataCache(new MetadataCache(0))
                    .chunkBytes(50_000).gapBytes(0).workerThreads(3).build();
            try (SafetensorsLoader loader = SafetensorsLoader.open(sliced, sel, List.of(dir))) {
                Map<String, LoadedTensor> got = loader.loadAll();
                assertEquals(wantSliced.keySet(), got.keySet());
                long needed = 0;
                for (var e : got.entrySet()) {
                    try (LoadedTensor t = e.getValue()) {
                        org.junit.jupiter.api.Assertions.assertArrayEquals(wantSliced.get(e.getKey()),
                                t.data().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), e.getKey());
                        needed += t.byteSize();
                    }
                }
                assertEquals(needed, loader.stats().dataBytes(), "with no gap, exactly the needed bytes");
                long ranges = loader.chunksToRead().stream().mapToLong(c -> c.ranges().size()).sum();
                assertEquals(ranges, loader.stats().dataRequests());
                assertTrue(ranges > loader.chunksToRead().size(), "slices that skip bytes need several requests");
            }
            for (int world : new int[] {1, 2}) {
                List<String> all = new java.util.ArrayList<>();
                for (int rank = 0; rank < world; rank++) {
                    LoaderConfig config = LoaderConfig.builder().hadoopConf(conf).metadataCache(new MetadataCache(0))
                            .chunkBytes(200_000).requestBytes(150_000).rank(rank, world).workerThreads(3).build();
                    try (SafetensorsLoader loader = SafetensorsLoader.open(config, dir)) {
                        all.addAll(TestCheckpoints.loadAndCheck(loader, reference));
                        long ranges = loader.chunksToRead().stream().mapToLong(c -> c.ranges().size()).sum();
                        assertEquals(ranges, loader.stats().dataRequests());
                        assertEquals(2, loader.stats().headerRequests());
                        assertTrue(loader.chunksToRead().size() > 1);
                    }
                }
                assertEquals(reference.size(), all.size(), "world " + world);
                assertEquals(reference.keySet(), new HashSet<>(all));
            }
        }
    }
}
