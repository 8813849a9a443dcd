package io.github.semyonsinchenko.safetensors.preprocess.graph;

import io.github.semyonsinchenko.safetensors.preprocess.BuildContext;
import io.github.semyonsinchenko.safetensors.preprocess.input.InputSchema;
import io.github.semyonsinchenko.safetensors.preprocess.input.LoadedTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The foreign keys that give edges: per table, its FK columns that can resolve (present in the
 * Parquet data, pointing at a table with a primary key map) and each one's target table.
 *
 * @param columns per table, the schema indices of its FK columns
 * @param targets per table, the target table of each of {@code columns}
 * @param isTarget per table, whether some FK points at it
 */
record ForeignKeys(int[][] columns, int[][] targets, boolean[] isTarget) {

    /** The resolvable foreign keys of {@code tables}; those that cannot resolve are reported and left out. */
    static ForeignKeys of(BuildContext ctx, List<LoadedTable> tables) {
        int[][] fkColumns = new int[tables.size()][];
        int[][] fkTargets = new int[tables.size()][];
        boolean[] isTarget = new boolean[tables.size()];
        for (LoadedTable t : tables) {
            List<Integer> cols = new ArrayList<>();
            List<Integer> tgts = new ArrayList<>();
            for (int j = 0; j < t.schema().columns().size(); j++) {
                InputSchema.Column c = t.schema().columns().get(j);
                if (c.foreignKey() == null || c.foreignTable() == null || !t.present()[j]) {
                    continue;
                }
                int target = ctx.schema.tableIndex(c.foreignTable());
                if (target < 0 || !tables.get(target).hasPk()) {
                    ctx.info(String.format(Locale.ROOT, "FK %s.%s -> %s: the target table has no primary key map;"
                            + " no edges (as headwater)", t.schema().name(), c.name(), c.foreignKey()));
                    continue;
                }
                // Q10: the column after the '.' is ignored; keys always match the target's primary key.
                cols.add(j);
                tgts.add(target);
                isTarget[target] = true;
            }
            fkColumns[t.index()] = cols.stream().mapToInt(Integer::intValue).toArray();
            fkTargets[t.index()] = tgts.stream().mapToInt(Integer::intValue).toArray();
        }
        return new ForeignKeys(fkColumns, fkTargets, isTarget);
    }

    /** True if some table has a foreign key that gives edges. */
    boolean any() {
        for (int[] c : columns) {
            if (c.length > 0) {
                return true;
            }
        }
        return false;
    }
}
