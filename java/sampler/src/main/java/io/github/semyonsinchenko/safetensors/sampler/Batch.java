package io.github.semyonsinchenko.safetensors.sampler;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * One batch of {@code B} sequences of {@code S} cells (spec §11): every output tensor as a
 * little-endian {@link MemorySegment} with its dtype and shape, named by the reference's Python
 * dict keys. The memory comes from a pool of reusable buffers: {@link #close()} gives it back, and
 * segments obtained from this batch must not be used after that (they are reused by a later batch).
 * Not thread-safe; hand a batch from thread to thread, don't share it.
 */
public final class Batch implements AutoCloseable {

    /** {@code [B, S]} i8: each cell's semantic type code ({@link SemanticType#code()}). */
    public static final String SEMANTIC_TYPES = "semantic_types";
    /** {@code [B, S]} i32: each cell's global column index. */
    public static final String COLUMN_IDS = "column_ids";
    /** {@code [B, S]} u16: the row of the sequence each cell belongs to, in visiting order. */
    public static final String SEQ_ROW_IDS = "seq_row_ids";
    /** {@code [B, S]} f32: numerical cells' z-scores (0 elsewhere). */
    public static final String NUMERIC_VALUES = "numeric_values";
    /** {@code [B, S, 15]} f32: timestamp cells' 15 features (0 elsewhere). */
    public static final String TIMESTAMP_VALUES = "timestamp_values";
    /** {@code [B, S]} u8: 0 or 1 for boolean cells. */
    public static final String BOOL_VALUES = "bool_values";
    /** {@code [B, S]} u32: categorical cells' global rows of the categorical embeddings. */
    public static final String CATEGORICAL_EMBED_IDS = "categorical_embed_ids";
    /** {@code [B, S]} u32: text cells' rows of {@link #TEXT_BATCH_EMBEDDINGS}. */
    public static final String TEXT_EMBED_IDS = "text_embed_ids";
    /** {@code [B, S]} u8: 1 where the cell is null. */
    public static final String IS_NULL = "is_null";
    /** {@code [B, S]} u8: 1 at the cell holding the task's target. */
    public static final String IS_TARGET = "is_target";
    /** {@code [B, S]} u8: 1 for padding, the cells past the end of each sequence. */
    public static final String IS_PADDING = "is_padding";
    /** {@code [B, R, R]} u8: 1 where sequence row {@code i} has a foreign key to sequence row {@code j}. */
    public static final String FK_ADJ = "fk_adj";
    /** {@code [B, S]} u16: a gather permutation of the positions, sorted by padding, column, position. */
    public static final String COL_PERM = "col_perm";
    /**
     * {@code [B, S]} u16: a gather permutation of the positions, rows ranked by a Cuthill-McKee order
     * over outgoing foreign keys.
     */
    public static final String OUT_PERM = "out_perm";
    /** {@code [B, S]} u16: as {@link #OUT_PERM}, over incoming foreign keys. */
    public static final String IN_PERM = "in_perm";
    /** {@code [U, 256]} f16: the embeddings of the distinct texts of this batch. */
    public static final String TEXT_BATCH_EMBEDDINGS = "text_batch_embeddings";
    /** {@code [1]} u8: the semantic type code of the task's target. */
    public static final String TARGET_STYPE = "target_stype";
    /** {@code [1]} u32: the task the batch was drawn from. */
    public static final String TASK_IDX = "task_idx";
    /**
     * {@code [1]} u32, opt-in ({@link SamplerConfig#emitCategoricalRange()}): first categorical
     * embedding row of the target's categories (0 for other tasks).
     */
    public static final String CAT_EMB_START = "cat_emb_start";
    /** {@code [1]} u32, opt-in: the number of the target's categories (0 for other tasks). */
    public static final String CAT_EMB_COUNT = "cat_emb_count";

    private final BatchPool pool;
    private final BatchBuffers buffers;
    private final Split split;
    private final int taskIdx;
    private final SemanticType targetStype;
    private final int uniqueTexts;
    private final List<BatchTensor> tensors;
    private boolean closed;

    Batch(BatchPool pool, BatchBuffers buf, Split split, int taskIdx, SemanticType targetStype, int uniqueTexts,
            boolean withCategoricalRange) {
        this.pool = pool;
        this.buffers = buf;
        this.split = split;
        this.taskIdx = taskIdx;
        this.targetStype = targetStype;
        this.uniqueTexts = uniqueTexts;
        long b = buf.batch;
        long s = buf.seqLen;
        long r = buf.maxRows;
        long[] bs = {b, s};
        List<BatchTensor> list = new ArrayList<>(20);
        list.add(t(SEMANTIC_TYPES, Dtype.I8, bs, buf.semanticTypes));
        list.add(t(COLUMN_IDS, Dtype.I32, bs, buf.columnIds));
        list.add(t(SEQ_ROW_IDS, Dtype.U16, bs, buf.seqRowIds));
        list.add(t(NUMERIC_VALUES, Dtype.F32, bs, buf.numericValues));
        list.add(t(TIMESTAMP_VALUES, Dtype.F32, new long[] {b, s, DatabaseLayout.TIMESTAMP_DIM}, buf.timestampValues));
        list.add(t(BOOL_VALUES, Dtype.U8, bs, buf.boolValues));
        list.add(t(CATEGORICAL_EMBED_IDS, Dtype.U32, bs, buf.categoricalIds));
        list.add(t(TEXT_EMBED_IDS, Dtype.U32, bs, buf.textIds));
        list.add(t(IS_NULL, Dtype.U8, bs, buf.isNull));
        list.add(t(IS_TARGET, Dtype.U8, bs, buf.isTarget));
        list.add(t(IS_PADDING, Dtype.U8, bs, buf.isPadding));
        list.add(t(FK_ADJ, Dtype.U8, new long[] {b, r, r}, buf.fkAdj));
        list.add(t(COL_PERM, Dtype.U16, bs, buf.colPerm));
        list.add(t(OUT_PERM, Dtype.U16, bs, buf.outPerm));
        list.add(t(IN_PERM, Dtype.U16, bs, buf.inPerm));
        list.add(new BatchTensor(TEXT_BATCH_EMBEDDINGS, Dtype.F16,
                new long[] {uniqueTexts, DatabaseLayout.EMBEDDING_DIM},
                buf.textEmbeddings().asSlice(0, (long) uniqueTexts * DatabaseLayout.EMBEDDING_ROW_BYTES).asReadOnly()));
        list.add(t(TARGET_STYPE, Dtype.U8, new long[] {1}, buf.targetStype));
        list.add(t(TASK_IDX, Dtype.U32, new long[] {1}, buf.taskIdx));
        if (withCategoricalRange) {
            list.add(t(CAT_EMB_START, Dtype.U32, new long[] {1}, buf.catEmbStart));
            list.add(t(CAT_EMB_COUNT, Dtype.U32, new long[] {1}, buf.catEmbCount));
        }
        this.tensors = Collections.unmodifiableList(list);
    }

    private static BatchTensor t(String name, Dtype dtype, long[] shape, MemorySegment seg) {
        return new BatchTensor(name, dtype, shape, seg.asReadOnly());
    }

    /**
     * Every tensor, in the order of the reference's dict.
     *
     * @return the tensors (unmodifiable)
     * @throws IllegalStateException if the batch is closed
     */
    public List<BatchTensor> tensors() {
        ensureOpen();
        return tensors;
    }

    /**
     * The tensor called {@code name}.
     *
     * @param name a dict key, e.g. {@link #FK_ADJ}
     * @return the tensor
     * @throws NoSuchElementException if the batch has no such tensor (the opt-in ones when not enabled)
     * @throws IllegalStateException if the batch is closed
     */
    public BatchTensor tensor(String name) {
        ensureOpen();
        for (BatchTensor t : tensors) {
            if (t.name().equals(name)) {
                return t;
            }
        }
        throw new NoSuchElementException("no tensor \"" + name + "\" in this batch (opt-in tensors: "
                + CAT_EMB_START + ", " + CAT_EMB_COUNT + ")");
    }

    /**
     * The bytes of tensor {@code name}, as {@link #tensor(String)} finds it.
     *
     * @param name a dict key
     * @return a read-only view, valid until the batch is closed
     */
    public MemorySegment data(String name) {
        return tensor(name).data();
    }

    /**
     * The split the batch was drawn from.
     *
     * @return train or val
     */
    public Split split() {
        return split;
    }

    /**
     * The task all sequences of the batch belong to.
     *
     * @return the task's index in the database
     */
    public int taskIdx() {
        return taskIdx;
    }

    /**
     * The semantic type of the task's target.
     *
     * @return the target's type
     */
    public SemanticType targetStype() {
        return targetStype;
    }

    /**
     * The number of sequences, {@code B}.
     *
     * @return the batch size
     */
    public int batchSize() {
        return buffers.batch;
    }

    /**
     * The cells per sequence, {@code S}, padding included.
     *
     * @return the sequence length
     */
    public int sequenceLength() {
        return buffers.seqLen;
    }

    /**
     * {@code U}: rows of {@code text_batch_embeddings}.
     *
     * @return the number of distinct texts in the batch
     */
    public int uniqueTexts() {
        return uniqueTexts;
    }

    /**
     * Non-padding cells of sequence {@code b}.
     *
     * @param b the sequence, in {@code [0, B)}
     * @return its number of cells, at most {@code S}
     * @throws IllegalStateException if the batch is closed
     */
    public int cells(int b) {
        ensureOpen();
        return buffers.cells[b];
    }

    /**
     * Writes the batch as a safetensors file (atomically; tensor names = the dict keys).
     *
     * @param path the file to write, replaced if it exists
     * @throws IOException if the file cannot be written
     */
    public void writeTo(Path path) throws IOException {
        writer().write(path);
    }

    /**
     * Streams the batch as a safetensors file into {@code out}.
     *
     * @param out the channel to write to; left open
     * @throws IOException if writing fails
     */
    public void writeTo(WritableByteChannel out) throws IOException {
        writer().write(out);
    }

    private SafetensorsWriter writer() {
        SafetensorsWriter w = new SafetensorsWriter().keepInsertionOrder(true);
        for (BatchTensor t : tensors()) {
            w.add(t.name(), t.dtype(), t.shape(), t.data());
        }
        return w;
    }

    /**
     * Whether the batch still owns its memory.
     *
     * @return false once {@link #close()} was called
     */
    public boolean isOpen() {
        return !closed;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("the batch is closed (its memory went back to the pool)");
        }
    }

    /** Returns the memory to the pool. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        pool.release(buffers);
    }

    @Override
    public String toString() {
        return "Batch[" + split.label() + ", task " + taskIdx + " (" + targetStype.jsonName() + "), B="
                + buffers.batch + ", S=" + buffers.seqLen + ", R=" + buffers.maxRows + ", U=" + uniqueTexts
                + (closed ? ", closed" : "") + "]";
    }
}
