package io.github.semyonsinchenko.safetensors.sampler;

import io.github.semyonsinchenko.safetensors.sampler.db.ChildTimes;
import io.github.semyonsinchenko.safetensors.sampler.db.ColumnStats;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.TableMetadata;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskMetadata;

/** What the hot path looks up, computed once per database and configuration. */
final class SamplingPlan {
    final Database db;
    final SamplerConfig config;
    /** Per table: local indices of its non-Ignored columns, in col_range order. */
    final int[][] emittedColumns;
    /** Per table: stype codes of {@link #emittedColumns}. */
    final byte[][] emittedCodes;
    /** Per table: local index of the temporal column, or -1. */
    final int[] temporalLocal;
    final int[] tableRowStart;
    final int[] tableColStart;
    /** Per task: the cell position that holds the target (spec §11, quirk Q2). */
    final int[] targetPosition;
    final SemanticType[] targetStype;
    final int[] catEmbStart;
    final int[] catEmbCount;
    final double globalTsMeanUs;
    final double globalTsStdUs;
    /** The children's times in {@code in_col_idx} order (the temporal filter's index). */
    final ChildTimes childTimes;

    SamplingPlan(Database db, SamplerConfig config) {
        this.db = db;
        this.config = config;
        DatabaseMetadata m = db.metadata();
        int nt = m.tables().size();
        emittedColumns = new int[nt][];
        emittedCodes = new byte[nt][];
        temporalLocal = new int[nt];
        tableRowStart = new int[nt];
        tableColStart = new int[nt];
        for (int t = 0; t < nt; t++) {
            TableMetadata tm = m.tables().get(t);
            int n = 0;
            for (int c = tm.colStart(); c < tm.colEnd(); c++) {
                if (m.columns().get(c).stype() != SemanticType.IGNORED) {
                    n++;
                }
            }
            emittedColumns[t] = new int[n];
            emittedCodes[t] = new byte[n];
            int k = 0;
            for (int c = tm.colStart(); c < tm.colEnd(); c++) {
                SemanticType st = m.columns().get(c).stype();
                if (st != SemanticType.IGNORED) {
                    emittedColumns[t][k] = c - tm.colStart();
                    emittedCodes[t][k] = (byte) st.code();
                    k++;
                }
            }
            temporalLocal[t] = tm.temporalCol() >= 0 ? tm.temporalCol() - tm.colStart() : -1;
            tableRowStart[t] = tm.rowStart();
            tableColStart[t] = tm.colStart();
        }
        int nk = m.tasks().size();
        targetPosition = new int[nk];
        targetStype = new SemanticType[nk];
        catEmbStart = new int[nk];
        catEmbCount = new int[nk];
        for (int k = 0; k < nk; k++) {
            TaskMetadata task = m.tasks().get(k);
            targetStype[k] = task.targetStype();
            int pos = 0;
            int[] cols = emittedColumns[task.anchorTable()];
            byte[] codes = emittedCodes[task.anchorTable()];
            for (int i = 0; i < cols.length && i < config.sequenceLength(); i++) {
                if (codes[i] == task.targetStype().code()) {
                    pos = i;
                    break;
                }
            }
            targetPosition[k] = pos;
            if (task.targetStats() instanceof ColumnStats.Categorical c) {
                catEmbStart[k] = c.catEmbStart();
                catEmbCount[k] = c.categories().size();
            }
        }
        globalTsMeanUs = m.globalTsMeanUs();
        globalTsStdUs = m.globalTsStdUs();
        childTimes = db.childTimes();
    }
}
