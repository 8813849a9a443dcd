package io.github.semyonsinchenko.safetensors.sampler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskData;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Our split of every seed of the fixture equals headwater's ({@code splits.tsv}), and shards partition it. */
class SplitsFixtureTest {

    @Test
    void everySeedMatchesHeadwater() throws IOException {
        List<String> lines = Files.readAllLines(Fixtures.expected().resolve("splits.tsv"));
        try (Database db = Database.open(Fixtures.db())) {
            int checked = 0;
            int[] perTask = new int[db.numTasks()];
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.split("\t");
                int task = Integer.parseInt(f[0]);
                int seed = Integer.parseInt(f[2]);
                TaskData t = db.task(task);
                assertEquals(f[1], t.metadata().name());
                assertEquals(Integer.parseInt(f[3]), t.anchorRow(seed));
                assertEquals(Long.parseLong(f[4]), t.observationTime(seed));
                assertEquals(Long.parseUnsignedLong(f[5]), SipHash13.hashSplitKey(task, t.anchorRow(seed), 123));
                assertEquals(Integer.parseInt(f[6]), Split.bucket(task, t.anchorRow(seed), 123));
                assertEquals(f[7], Split.assign(task, t.anchorRow(seed), 123, 0.8f, 0.1f).label());
                perTask[task]++;
                checked++;
            }
            for (int t = 0; t < db.numTasks(); t++) {
                assertEquals(db.task(t).numSeeds(), perTask[t], "every seed of task " + t + " is in splits.tsv");
            }
            assertTrue(checked > 1000);
        }
    }

    @Test
    void shardsPartitionEachSplitRoundRobin() throws IOException {
        try (Database db = Database.open(Fixtures.db())) {
            SamplerConfig one = SamplerConfig.builder().build();
            SeedShards all = new SeedShards(db, one);
            for (Split s : Split.values()) {
                for (int t = 0; t < db.numTasks(); t++) {
                    int[] full = all.shard(s, t);
                    List<Integer> merged = new ArrayList<>();
                    int[][] parts = new int[3][];
                    for (int r = 0; r < 3; r++) {
                        parts[r] = new SeedShards(db, SamplerConfig.builder().rank(r, 3).build()).shard(s, t);
                    }
                    for (int j = 0; j < full.length; j++) {
                        assertEquals(full[j], parts[j % 3][j / 3]);
                        merged.add(parts[j % 3][j / 3]);
                    }
                    assertEquals(full.length, parts[0].length + parts[1].length + parts[2].length);
                    for (int j = 1; j < full.length; j++) {
                        assertTrue(full[j - 1] < full[j], "file order");
                    }
                    for (int seed : full) {
                        assertEquals(s, Split.assign(t, db.task(t).anchorRow(seed), 123, 0.8f, 0.1f));
                    }
                }
            }
        }
    }
}
