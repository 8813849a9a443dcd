package io.github.semyonsinchenko.safetensors.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The index's two questions, asked of an index this module wrote, and its commit check. */
class TensorIndexFileTest {
    @TempDir
    java.nio.file.Path dir;

    @Test
    void answersWhichFilesHoldKeysAndWhichColumnsItHas() throws IOException {
        Configuration conf = new Configuration();
        FileSystem fs = FileSystem.getLocal(conf);
        Path root = new Path(dir.toUri());
        List<IndexEntry> entries = List.of(
                new IndexEntry("a", "image", "a/image", "part-0.safetensors", new long[] {2, 3}, "F32", 0, 24),
                new IndexEntry("a", "label", "a/label", "part-0.safetensors", new long[] {}, "I64", 24, 32),
                new IndexEntry("b", "image", "b/image", "part-1.safetensors", new long[] {2, 3}, "F32", 0, 24),
                new IndexEntry("c", "image", "c/image", "part-2.safetensors", new long[] {2, 3}, "F32", 0, 24));
        String relative = TensorIndexFile.write(fs, conf, root, entries, "commit-1", DatasetCommit.Policy.DEFAULT);
        Path index = new Path(root, relative);

        assertEquals(Set.of("part-0.safetensors", "part-2.safetensors"),
                TensorIndexFile.filesHoldingKeys(index, "commit-1", Set.of("a", "c", "zzz"), conf));
        assertEquals(List.of("image", "label"), TensorIndexFile.columns(index, "commit-1", conf));

        TensorIndexFile.StaleIndexException stale = assertThrows(TensorIndexFile.StaleIndexException.class,
                () -> TensorIndexFile.columns(index, "commit-2", conf));
        assertTrue(stale.getMessage().contains("of commit commit-1, the manifest of commit commit-2"),
                stale.getMessage());
    }
}
