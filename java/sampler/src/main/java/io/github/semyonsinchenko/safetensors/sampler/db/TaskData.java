package io.github.semyonsinchenko.safetensors.sampler.db;

import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.F32;
import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.I64;
import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.U32;
import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.U8;

import java.lang.foreign.MemorySegment;

/**
 * {@code tasks/<name>.bin}: a task's seeds (anchor row, observation time) and targets, in file
 * order. A view of the mapping; valid while the {@link Database} is open.
 */
public final class TaskData {
    private final TaskMetadata metadata;
    private final MemorySegment segment;
    private final int numSeeds;
    private final long timesOffset;
    private final long validityOffset;
    private final long valuesOffset;

    TaskData(TaskMetadata metadata, MemorySegment segment, int numSeeds) {
        this.metadata = metadata;
        this.segment = segment;
        this.numSeeds = numSeeds;
        this.timesOffset = DatabaseLayout.taskObservationTimesOffset(numSeeds);
        this.validityOffset = DatabaseLayout.taskValidityOffset(numSeeds);
        this.valuesOffset = DatabaseLayout.taskValuesOffset(numSeeds);
    }

    /**
     * The task's entry in {@code metadata.json}.
     *
     * @return the task's metadata
     */
    public TaskMetadata metadata() {
        return metadata;
    }

    /**
     * The task's seeds.
     *
     * @return the seed count
     */
    public int numSeeds() {
        return numSeeds;
    }

    /**
     * The seed's anchor row.
     *
     * @param seed a seed index, in file order
     * @return a global row index
     */
    public int anchorRow(int seed) {
        return segment.get(U32, DatabaseLayout.TASK_HEADER_BYTES + 4L * seed);
    }

    /**
     * The seed's observation time: children dated later are not sampled.
     *
     * @param seed a seed index
     * @return epoch microseconds, or {@link DatabaseLayout#NO_OBSERVATION_TIME}
     */
    public long observationTime(int seed) {
        return segment.get(I64, timesOffset + 8L * seed);
    }

    /**
     * Whether the seed's target is null.
     *
     * @param seed a seed index
     * @return true if the target has no value
     */
    public boolean targetIsNull(int seed) {
        return (segment.get(U8, validityOffset + (seed >>> 3)) >> (seed & 7) & 1) == 0;
    }

    /**
     * A Numerical target's z-score.
     *
     * @param seed a seed index
     * @return the z-score (0 when null)
     */
    public float targetNumerical(int seed) {
        return segment.get(F32, valuesOffset + 4L * seed);
    }

    /**
     * Byte offset in {@link #segment()} of a Timestamp target's 15 floats.
     *
     * @param seed a seed index
     * @return the offset of the target's first float
     */
    public long targetTimestampOffset(int seed) {
        return valuesOffset + 4L * DatabaseLayout.TIMESTAMP_DIM * seed;
    }

    /**
     * A Boolean target's value.
     *
     * @param seed a seed index
     * @return the value (false when null)
     */
    public boolean targetBoolean(int seed) {
        return (segment.get(U8, valuesOffset + (seed >>> 3)) >> (seed & 7) & 1) != 0;
    }

    /**
     * A Categorical target's global categorical embedding index.
     *
     * @param seed a seed index
     * @return the index (0 when null)
     */
    public int targetCategorical(int seed) {
        return segment.get(U32, valuesOffset + 4L * seed);
    }

    /**
     * The mapping of the whole file, read-only.
     *
     * @return the file's bytes
     */
    public MemorySegment segment() {
        return segment;
    }
}
