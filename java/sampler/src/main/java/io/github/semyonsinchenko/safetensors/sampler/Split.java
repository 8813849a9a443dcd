package io.github.semyonsinchenko.safetensors.sampler;

import java.util.Locale;

/** The split a seed belongs to. Test seeds are assigned but never sampled (as in the reference). */
public enum Split {
    /** Training seeds, sampled without replacement by {@link Sampler#nextTrain()}. */
    TRAIN,
    /** Validation seeds, sampled with replacement by {@link Sampler#nextVal()}. */
    VAL,
    /** Test seeds: assigned, never sampled. */
    TEST;

    /**
     * The split of seed {@code anchorRow} of task {@code task} (spec §7): SipHash-1-3 of the key,
     * {@code mod 1000} unsigned, compared with thresholds computed in f32 arithmetic, so that at
     * the default ratios bucket 900 is Val (quirk Q1). The test ratio plays no part.
     *
     * @param task the task's index
     * @param anchorRow the seed's anchor row
     * @param splitSeed the hash key
     * @param trainRatio the training share
     * @param valRatio the validation share
     * @return the seed's split
     */
    public static Split assign(int task, int anchorRow, long splitSeed, float trainRatio, float valRatio) {
        return ofBucket(bucket(task, anchorRow, splitSeed), trainRatio, valRatio);
    }

    /**
     * The seed's bucket: {@code hash mod 1000}, unsigned.
     *
     * @param task the task's index
     * @param anchorRow the seed's anchor row
     * @param splitSeed the hash key
     * @return the bucket, in {@code [0, 1000)}
     */
    public static int bucket(int task, int anchorRow, long splitSeed) {
        return (int) Long.remainderUnsigned(SipHash13.hashSplitKey(task, anchorRow, splitSeed), 1000);
    }

    /**
     * The split of a bucket: train below {@code trainRatio * 1000}, val below
     * {@code (trainRatio + valRatio) * 1000}, test above (in f32, as the reference).
     *
     * @param bucket the bucket, in {@code [0, 1000)}
     * @param trainRatio the training share
     * @param valRatio the validation share
     * @return the bucket's split
     */
    public static Split ofBucket(int bucket, float trainRatio, float valRatio) {
        float b = (float) bucket;
        float t1 = trainRatio * 1000.0f;
        float t2 = (trainRatio + valRatio) * 1000.0f;
        if (b < t1) {
            return TRAIN;
        }
        return b < t2 ? VAL : TEST;
    }

    /**
     * Lower-case name, as in the CLI and {@code splits.tsv}.
     *
     * @return {@code train}, {@code val} or {@code test}
     */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
