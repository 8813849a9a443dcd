package io.github.semyonsinchenko.safetensors.sampler;

import java.util.Locale;

/** The split a seed belongs to. Test seeds are assigned but never sampled (as in the reference). */
public enum Split {
    TRAIN,
    VAL,
    TEST;

    /**
     * The split of seed {@code anchorRow} of task {@code task} (spec §7): SipHash-1-3 of the key,
     * {@code mod 1000} unsigned, compared with thresholds computed in f32 arithmetic, so that at
     * the default ratios bucket 900 is Val (quirk Q1). The test ratio plays no part.
     */
    public static Split assign(int task, int anchorRow, long splitSeed, float trainRatio, float valRatio) {
        return ofBucket(bucket(task, anchorRow, splitSeed), trainRatio, valRatio);
    }

    /** {@code hash mod 1000}, unsigned. */
    public static int bucket(int task, int anchorRow, long splitSeed) {
        return (int) Long.remainderUnsigned(SipHash13.hashSplitKey(task, anchorRow, splitSeed), 1000);
    }

    public static Split ofBucket(int bucket, float trainRatio, float valRatio) {
        float b = (float) bucket;
        float t1 = trainRatio * 1000.0f;
        float t2 = (trainRatio + valRatio) * 1000.0f;
        if (b < t1) {
            return TRAIN;
        }
        return b < t2 ? VAL : TEST;
    }

    /** Lower-case name, as in the CLI and {@code splits.tsv}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
