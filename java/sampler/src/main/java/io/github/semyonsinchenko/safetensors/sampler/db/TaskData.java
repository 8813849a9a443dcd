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

    public TaskMetadata metadata() {
        return metadata;
    }

    public int numSeeds() {
        return numSeeds;
    }

    /** The seed's anchor row (a global row index). */
    public int anchorRow(int seed) {
        return segment.get(U32, DatabaseLayout.TASK_HEADER_BYTES + 4L * seed);
    }

    /** Epoch microseconds, or {@link DatabaseLayout#NO_OBSERVATION_TIME}. */
    public long observationTime(int seed) {
        return segment.get(I64, timesOffset + 8L * seed);
    }

    public boolean targetIsNull(int seed) {
        return (segment.get(U8, validityOffset + (seed >>> 3)) >> (seed & 7) & 1) == 0;
    }

    public float targetNumerical(int seed) {
        return segment.get(F32, valuesOffset + 4L * seed);
    }

    /** Byte offset in {@link #segment()} of a Timestamp target's 15 floats. */
    public long targetTimestampOffset(int seed) {
        return valuesOffset + 4L * DatabaseLayout.TIMESTAMP_DIM * seed;
    }

    public boolean targetBoolean(int seed) {
        return (segment.get(U8, valuesOffset + (seed >>> 3)) >> (seed & 7) & 1) != 0;
    }

    public int targetCategorical(int seed) {
        return segment.get(U32, valuesOffset + 4L * seed);
    }

    public MemorySegment segment() {
        return segment;
    }
}
