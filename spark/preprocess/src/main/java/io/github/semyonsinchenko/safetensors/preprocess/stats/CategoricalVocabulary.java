package io.github.semyonsinchenko.safetensors.preprocess.stats;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import io.github.semyonsinchenko.safetensors.preprocess.text.Utf8;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;

/**
 * Stage 3, the categorical vocabulary: {@code "<col> is <value>"} per categorical column in global
 * column order, categories in UTF-8 byte order, cut to 2048 bytes, deduplicated globally with the
 * first occurrence winning. Small: the categories are in {@code metadata.json} anyway.
 */
public final class CategoricalVocabulary {
    private final LinkedHashMap<String, Integer> index = new LinkedHashMap<>();

    /**
     * Builds the vocabulary from the statistics (categories already sorted) and returns the
     * statistics with each categorical column's {@code cat_emb_start} set.
     */
    public static CategoricalVocabulary build(BuildContext ctx, List<LoadedTable> tables, List<ColumnStats> stats) {
        CategoricalVocabulary vocab = new CategoricalVocabulary();
        int ci = 0;
        for (LoadedTable t : tables) {
            for (InputSchema.Column c : t.schema().columns()) {
                if (stats.get(ci) instanceof ColumnStats.Categorical cat) {
                    int start = vocab.index.size();
                    for (String v : cat.categories()) {
                        vocab.index.putIfAbsent(Utf8.truncate(c.name() + " is " + v, Utf8.MAX_VOCAB_BYTES),
                                vocab.index.size());
                    }
                    stats.set(ci, new ColumnStats.Categorical(cat.numNulls(), cat.categories(), start));
                }
                ci++;
            }
        }
        ctx.info(String.format(Locale.ROOT, "%d column strings, %d categorical strings", stats.size(),
                vocab.index.size()));
        return vocab;
    }

    /** The strings in index order. */
    public List<String> strings() {
        return new ArrayList<>(index.keySet());
    }

    /** Value to vocabulary index for one column's categories; the lookup is uncut, as headwater's. */
    public HashMap<String, Integer> indices(String column, List<String> categories) {
        HashMap<String, Integer> cats = new HashMap<>();
        for (String v : categories) {
            Integer idx = index.get(column + " is " + v);
            cats.put(v, idx == null ? 0 : idx);
        }
        return cats;
    }
}
