package io.github.semyonsinchenko.safetensors.sampler;

import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskData;

/**
 * Every task's seeds split into train/val/test (spec §7) and sharded round-robin over ranks
 * (spec §8): rank {@code r} of {@code w} keeps the entries of each split's list whose position
 * {@code j} in that list has {@code j mod w == r}. Seed indices are positions in the task file.
 */
public final class SeedShards {
    private final int[][][] shards; // [split][task] -> seed indices on this rank

    /**
     * Reads every task's seeds and assigns this rank's share.
     *
     * @param db the database whose tasks are split
     * @param config the split ratios, split seed, rank and world size
     */
    public SeedShards(Database db, SamplerConfig config) {
        int numTasks = db.numTasks();
        Split[] splits = Split.values();
        shards = new int[splits.length][numTasks][];
        for (int t = 0; t < numTasks; t++) {
            TaskData task = db.task(t);
            int n = task.numSeeds();
            int[][] lists = new int[splits.length][n];
            int[] sizes = new int[splits.length];
            for (int i = 0; i < n; i++) {
                Split s = Split.assign(t, task.anchorRow(i), config.splitSeed(), config.trainRatio(), config.valRatio());
                lists[s.ordinal()][sizes[s.ordinal()]++] = i;
            }
            for (Split s : splits) {
                int size = sizes[s.ordinal()];
                int w = config.worldSize();
                int r = config.rank();
                int mine = size > r ? (size - r + w - 1) / w : 0;
                int[] shard = new int[mine];
                for (int j = r, k = 0; j < size; j += w) {
                    shard[k++] = lists[s.ordinal()][j];
                }
                shards[s.ordinal()][t] = shard;
            }
        }
    }

    /**
     * Seed indices of {@code task} in {@code split} on this rank, in file order.
     *
     * @param split the split
     * @param task the task's index
     * @return the seed indices (not a copy: do not modify)
     */
    public int[] shard(Split split, int task) {
        return shards[split.ordinal()][task];
    }

    /**
     * The number of tasks in the database.
     *
     * @return the task count
     */
    public int numTasks() {
        return shards[0].length;
    }

    /**
     * Seeds of {@code split} on this rank, over all tasks.
     *
     * @param split the split
     * @return the seed count
     */
    public long total(Split split) {
        long n = 0;
        for (int[] s : shards[split.ordinal()]) {
            n += s.length;
        }
        return n;
    }
}
