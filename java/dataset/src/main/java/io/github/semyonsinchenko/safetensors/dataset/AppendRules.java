package io.github.semyonsinchenko.safetensors.dataset;

import java.util.List;
import java.util.Map;

/**
 * When an append fits an existing dataset: one rule, asked at planning time (before any task runs)
 * and again at job commit (the dataset may have changed while the job ran, and only then are the
 * data's dtypes and shapes known).
 */
public final class AppendRules {
    private AppendRules() {}

    /**
     * What makes an append of this layout impossible, or null when it fits. A dataset whose schema
     * is empty (written from an empty DataFrame, or a manifest without {@code schema}) accepts any
     * columns: it has none to disagree with.
     *
     * @param old the dataset appended to
     * @param layout the write's layout
     * @param columns the write's serialized columns, in order
     * @return the problem in words, or null
     */
    public static String layoutProblem(Manifest old, Layout layout, List<String> columns) {
        String mode = layout.writeMode();
        Integer batchSize = layout.batchSize();
        String tail = layout.tailStrategy();
        String kvSeparator = layout.kvSeparator();
        if (old.writeMode() == null) {
            // The original connector records no write_mode; its schema has other keys and shapes.
            return "the dataset's manifest records no write_mode (written by another connector, e.g. the original "
                    + "Scala one), so this write cannot know how its tensors are laid out; write it anew with mode "
                    + "overwrite, or to another path";
        }
        if (!old.writeMode().equals(mode)) {
            return "the dataset was written in " + old.writeMode() + " mode, this write is in " + mode + " mode";
        }
        if (batchSize != null && old.batchSize() != null && !old.batchSize().equals(batchSize)) {
            return "the dataset has batch_size=" + old.batchSize() + ", this write batch_size=" + batchSize;
        }
        if (tail != null && old.tailStrategy() != null && !old.tailStrategy().equalsIgnoreCase(tail)) {
            return "the dataset has tail_strategy=" + old.tailStrategy() + ", this write tail_strategy=" + tail;
        }
        if (kvSeparator != null && old.isKv() && !kvSeparator.equals(old.kvSeparator())) {
            return old.kvSeparator() == null
                    ? "the dataset names kv tensors the way earlier versions of this connector did (<key> or "
                            + "<key>/<column>), this write with kv_separator '" + kvSeparator + "'; rewrite it with "
                            + "mode overwrite to append to it"
                    : "the dataset has kv_separator '" + old.kvSeparator() + "', this write '" + kvSeparator + "'";
        }
        if (!old.schema().isEmpty() && !List.copyOf(old.schema().keySet()).equals(columns)) {
            return "the dataset has columns " + old.schema().keySet() + ", this write has " + columns;
        }
        return null;
    }

    /**
     * What makes the written data disagree with the dataset's dtypes and shapes, or null. In kv
     * mode only dtypes must agree: every row is its own tensor, shapes may vary. So in batch mode
     * for a column whose shapes already vary (no shape in the manifest); a batch column of one
     * shape keeps it.
     *
     * @param old the dataset appended to
     * @param written per-sample dtype and shape of each column written
     * @return the problem in words, or null
     */
    public static String schemaProblem(Manifest old, Map<String, ColumnSchema> written) {
        for (Map.Entry<String, ColumnSchema> e : written.entrySet()) {
            ColumnSchema was = old.schema().get(e.getKey());
            boolean dtypeOnly = was != null && (old.isKv() || was.shape() == null);
            if (dtypeOnly ? !was.dtype().equals(e.getValue().dtype()) : was != null && !was.sameAs(e.getValue())) {
                return "column '" + e.getKey() + "' is " + e.getValue() + " but the dataset has " + was;
            }
        }
        return null;
    }
}
