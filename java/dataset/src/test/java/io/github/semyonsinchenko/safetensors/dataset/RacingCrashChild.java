package io.github.semyonsinchenko.safetensors.dataset;

import io.github.semyonsinchenko.safetensors.dataset.DatasetCommit.Operation;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * A child JVM of {@link CommitCrashTest}: append A reads the dataset, then, right before A claims its
 * version, append B commits (same JVM), so A loses the race and rebases. The crash point (system
 * property {@link CrashPoints#PROPERTY}) halts the JVM somewhere along A's second attempt.
 *
 * <p>args: root URI
 */
public final class RacingCrashChild {
    private RacingCrashChild() {}

    public static void main(String[] args) throws Exception {
        Configuration conf = HadoopConfs.of(Map.of());
        Path root = new Path(args[0]);
        KvWriter writer = new KvWriter(conf, root, CommitPolicy.DEFAULT, true);
        String job = "racing-a";
        DatasetCommit a = new DatasetCommit(conf, root, CommitPolicy.DEFAULT, job);
        boolean[] once = {false};
        a.beforeClaim = v -> {
            if (!once[0]) {
                once[0] = true;
                try {
                    writer.commit(Operation.APPEND, List.of(DatasetCommitTest.rows("b", 3)));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        };
        writer.run(a, writer.stage(Operation.APPEND, job, List.of(DatasetCommitTest.rows("a", 4))), job);
        System.exit(0);
    }
}
