package io.github.semyonsinchenko.safetensors.preprocess.partition;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.SectionWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PartsTest {

    @TempDir
    Path dir;

    @Test
    void committedPartsOfAnySizeJoinInPartitionOrder() throws IOException {
        Random rnd = new Random(7);
        int[] sizes = {0, 1, 7, 8, 9, 13, 0, 64, 3, 100};
        List<Boolean> all = new ArrayList<>();
        List<Parts.Info> infos = new ArrayList<>();
        for (int p = 0; p < sizes.length; p++) {
            try (Parts.Out out = new Parts.Out(dir.toString(), p, 2)) {
                for (int i = 0; i < sizes[p]; i++) {
                    boolean b = rnd.nextBoolean();
                    all.add(b);
                    out.section(0).bit(b);
                    out.section(1).u32(all.size());
                }
                infos.add(out.commit(sizes[p]));
            }
        }
        Collections.reverse(infos); // the driver collects them in any order
        List<Parts.Info> ordered = Parts.inOrder(infos);
        Path file = dir.resolve("joined");
        try (SectionWriter w = SectionWriter.create(file)) {
            w.appendSection(DatabaseLayout.Section.BITMAP, Parts.files(dir, 0, ordered), Parts.rows(ordered));
            w.appendSection(DatabaseLayout.Section.VALUES_4, Parts.files(dir, 1, ordered), Parts.rows(ordered));
            w.finish();
        }
        int bitmapEnd = (int) DatabaseLayout.pad8((all.size() + 7) / 8);
        byte[] want = new byte[(int) DatabaseLayout.pad8(bitmapEnd + 4L * all.size())];
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i)) {
                want[i / 8] |= (byte) (1 << (i % 8));
            }
            int v = i + 1;
            for (int k = 0; k < 4; k++) {
                want[bitmapEnd + 4 * i + k] = (byte) (v >>> (8 * k));
            }
        }
        assertArrayEquals(want, Files.readAllBytes(file));
        assertEquals(4L * sizes[7], Files.size(Parts.partFile(dir, 1, 7)));
    }

    @Test
    void onlyACommitPublishesAPartAndNoAttemptLeavesATemporaryFile() throws IOException {
        try (Parts.Out committed = new Parts.Out(dir.toString(), 0, 2)) {
            committed.section(0).bit(true);
            committed.section(1).u32(7);
            committed.commit(1);
        }
        try (Parts.Out abandoned = new Parts.Out(dir.toString(), 1, 2)) {
            abandoned.section(0).bit(true); // a failed attempt: closed without a commit
        }
        assertTrue(Files.exists(Parts.partFile(dir, 0, 0)) && Files.exists(Parts.partFile(dir, 1, 0)));
        assertFalse(Files.exists(Parts.partFile(dir, 0, 1)), "an attempt without a commit leaves no part");
        assertFalse(Files.exists(Parts.partFile(dir, 1, 1)), "an attempt without a commit leaves no part");
        try (var files = Files.list(dir)) {
            assertEquals(0, files.filter(f -> f.toString().endsWith(".tmp")).count(), "no temporary parts left");
        }
    }
}
