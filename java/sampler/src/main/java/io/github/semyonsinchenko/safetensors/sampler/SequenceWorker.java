package io.github.semyonsinchenko.safetensors.sampler;

import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.F32;
import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.U16;
import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.U32;
import static io.github.semyonsinchenko.safetensors.sampler.db.Layouts.U8;

import io.github.semyonsinchenko.safetensors.sampler.db.ChildTimes;
import io.github.semyonsinchenko.safetensors.sampler.db.Database;
import io.github.semyonsinchenko.safetensors.sampler.db.DatabaseLayout;
import io.github.semyonsinchenko.safetensors.sampler.db.Graph;
import io.github.semyonsinchenko.safetensors.sampler.db.SemanticType;
import io.github.semyonsinchenko.safetensors.sampler.db.TableData;
import io.github.semyonsinchenko.safetensors.sampler.db.TaskData;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Builds one sequence at a time (spec §10-11: BFS, cell emission, target masking, fk_adj and the
 * three permutations) straight into a batch's buffers. Owns all its scratch space, sized once and
 * grown only when a sequence needs more, so steady-state sampling allocates nothing. One worker
 * per thread.
 */
final class SequenceWorker {
    private static final int CODE_IDENTIFIER = SemanticType.IDENTIFIER.code();
    private static final int CODE_NUMERICAL = SemanticType.NUMERICAL.code();
    private static final int CODE_TIMESTAMP = SemanticType.TIMESTAMP.code();
    private static final int CODE_BOOLEAN = SemanticType.BOOLEAN.code();
    private static final int CODE_CATEGORICAL = SemanticType.CATEGORICAL.code();
    private static final int TS_BYTES = 4 * DatabaseLayout.TIMESTAMP_DIM;

    private final SamplingPlan plan;
    private final Database db;
    private final Graph graph;
    private final TableData[] tables;
    private final int seqLen;
    private final int maxRows;
    private final int childWidth;
    private final int[] childTimes;
    private final double tsMeanUs;
    private final double tsStdUs;
    private final SmallRng rng = new SmallRng(0);

    private final VisitedRows visited;

    // The BFS frontier: two FIFO queues, parents first (spec §10's pop rule).
    private int[] parents = new int[256];
    private int[] children = new int[256];
    private int pHead;
    private int pTail;
    private int cHead;
    private int cTail;
    private int[] eligible = new int[256];
    private final int[] rowGlobal;
    private final boolean[] rowUsed;

    // fk_adj pairs (i, j), i != j, in ascending i, and the two adjacency lists built from them.
    private int[] pairI = new int[512];
    private int[] pairJ = new int[512];
    private int[] bucket = new int[512];
    private int[] adjList = new int[512];
    private final int[] adjStart;
    private final int[] degree;
    private final int[] order;
    private final int[] rank;
    private final boolean[] rcmVisited;
    private int[] neighbours = new int[64];
    // Counting sorts (stable, allocation-free): keys per cell, the sorted positions, bucket counts.
    private final int[] cellKeys;
    private final int[] sortedPositions;
    private final int[] counts;
    private final int[] startOrder;

    SequenceWorker(SamplingPlan plan) {
        this.plan = plan;
        this.db = plan.db;
        this.graph = db.graph();
        this.tables = new TableData[db.numTables()];
        for (int t = 0; t < tables.length; t++) {
            tables[t] = db.table(t);
        }
        this.seqLen = plan.config.sequenceLength();
        this.maxRows = plan.config.maxRowsPerSeq();
        this.childWidth = plan.config.bfsChildWidth();
        this.childTimes = plan.childTimes.bits();
        this.tsMeanUs = plan.globalTsMeanUs;
        this.tsStdUs = plan.globalTsStdUs;
        this.visited = new VisitedRows(maxRows);
        int rowsCap = maxRows; // rows of all-Ignored tables take an id but no cell
        this.rowGlobal = new int[rowsCap];
        this.rowUsed = new boolean[rowsCap];
        this.adjStart = new int[rowsCap + 1];
        this.degree = new int[rowsCap];
        this.order = new int[rowsCap];
        this.rank = new int[rowsCap];
        this.rcmVisited = new boolean[rowsCap];
        this.cellKeys = new int[seqLen];
        this.sortedPositions = new int[seqLen];
        this.counts = new int[Math.max(rowsCap, db.metadata().numColumns()) + 2];
        this.startOrder = new int[rowsCap];
    }

    /**
     * Builds sequence {@code b} of {@code buf} from seed {@code seedIdx} of {@code task}, with the
     * sequence RNG seeded by {@code rngSeed}. Clears the sequence's slices first.
     */
    void build(BatchBuffers buf, int b, int task, int seedIdx, long rngSeed) {
        buf.clearSequence(b);
        rng.seed(rngSeed);
        visited.clear();
        TaskData taskData = db.task(task);
        int seedRow = taskData.anchorRow(seedIdx);
        long obsTime = taskData.observationTime(seedIdx);
        boolean timeFilter = obsTime != DatabaseLayout.NO_OBSERVATION_TIME;
        final long cellBase = (long) b * seqLen;

        pHead = 0;
        pTail = 0;
        cHead = 0;
        cTail = 0;
        parents[pTail++] = seedRow;
        int cells = 0;
        int rows = 0;
        while (true) {
            int row;
            if (pHead < pTail) {
                row = parents[pHead++];
            } else if (cHead < cTail) {
                row = children[cHead++];
            } else {
                break;
            }
            if (cells >= seqLen || rows >= maxRows) {
                break;
            }
            if (!visited.add(row, rows)) {
                continue;
            }
            int sid = rows++;
            rowGlobal[sid] = row;
            rowUsed[sid] = false;
            cells = emitRow(buf, cellBase, cells, row, sid);
            pushParents(row);
            pushChildren(row, timeFilter, obsTime);
        }
        buf.cells[b] = cells;

        maskTarget(buf, cellBase, task, taskData, seedIdx);
        int npairs = fillAdjacency(buf, b, rows);
        // out_perm: adj[i] = j with fk_adj[i][j]; in_perm: adj[i] = j with fk_adj[j][i].
        buildOutAdjacency(npairs, rows);
        writeRowPermutation(buf.outPerm, cellBase, cells, rows, buf);
        buildInAdjacency(npairs, rows);
        writeRowPermutation(buf.inPerm, cellBase, cells, rows, buf);
        writeColumnPermutation(buf, cellBase, cells);
    }

    /**
     * Writes the cells of {@code row} (sequence id {@code sid}) from position {@code cells} on, in
     * column order, Ignored skipped; the rest of the row is lost at S. Returns the new cell count.
     */
    private int emitRow(BatchBuffers buf, long cellBase, int cells, int row, int sid) {
        int t = db.tableOfRow(row);
        TableData table = tables[t];
        int local = row - plan.tableRowStart[t];
        int colStart = plan.tableColStart[t];
        int[] cols = plan.emittedColumns[t];
        byte[] codes = plan.emittedCodes[t];
        for (int k = 0; k < cols.length && cells < seqLen; k++) {
            int p = cells++;
            long i = cellBase + p;
            int lc = cols[k];
            int code = codes[k];
            rowUsed[sid] = true;
            buf.isPadding.set(U8, i, (byte) 0);
            buf.semanticTypes.set(U8, i, (byte) code);
            buf.columnIds.set(U32, i * 4, colStart + lc);
            buf.seqRowIds.set(U16, i * 2, (short) sid);
            if (code == CODE_IDENTIFIER) {
                continue; // presence is never reported (Q4): is_null stays 0
            }
            if (!table.isValid(lc, local)) {
                buf.isNull.set(U8, i, (byte) 1);
                continue;
            }
            if (code == CODE_NUMERICAL) {
                buf.numericValues.set(F32, i * 4, table.numerical(lc, local));
            } else if (code == CODE_TIMESTAMP) {
                MemorySegment.copy(table.segment(), table.timestampOffset(lc, local), buf.timestampValues,
                        i * TS_BYTES, TS_BYTES);
            } else if (code == CODE_BOOLEAN) {
                buf.boolValues.set(U8, i, table.bool(lc, local) ? (byte) 1 : (byte) 0);
            } else if (code == CODE_CATEGORICAL) {
                buf.categoricalIds.set(U32, i * 4, table.embeddingIndex(lc, local));
            } else {
                buf.textIds.set(U32, i * 4, table.embeddingIndex(lc, local)); // global until collation
            }
        }
        return cells;
    }

    /** Queues every unvisited outgoing neighbour of {@code row} as a parent: no limit, no time filter. */
    private void pushParents(int row) {
        int oe = graph.outEnd(row);
        for (int k = graph.outStart(row); k < oe; k++) {
            int nb = graph.outNeighbour(k);
            if (!visited.contains(nb)) {
                if (pTail == parents.length) {
                    if (pHead > 0) {
                        System.arraycopy(parents, pHead, parents, 0, pTail - pHead);
                        pTail -= pHead;
                        pHead = 0;
                    }
                    if (pTail == parents.length) {
                        parents = Arrays.copyOf(parents, parents.length * 2);
                    }
                }
                parents[pTail++] = nb;
            }
        }
    }

    /**
     * Queues the children of {@code row} that are unvisited and not after the observation time, in
     * CSR order; more than w of them are shuffled (all of them, as the reference does) and cut to w.
     */
    private void pushChildren(int row, boolean timeFilter, long obsTime) {
        int ie = graph.inEnd(row);
        int ne = 0;
        for (int k = graph.inStart(row); k < ie; k++) {
            if (timeFilter && ChildTimes.isAfter(childTimes[k], obsTime, tsMeanUs, tsStdUs)) {
                continue;
            }
            int c = graph.inNeighbour(k);
            if (visited.contains(c)) {
                continue;
            }
            if (ne == eligible.length) {
                eligible = Arrays.copyOf(eligible, ne * 2);
            }
            eligible[ne++] = c;
        }
        if (ne > childWidth) {
            rng.shuffle(eligible, 0, ne);
            ne = childWidth;
        }
        if (cTail + ne > children.length) {
            if (cHead > 0) {
                System.arraycopy(children, cHead, children, 0, cTail - cHead);
                cTail -= cHead;
                cHead = 0;
            }
            if (cTail + ne > children.length) {
                children = Arrays.copyOf(children, Math.max(children.length * 2, cTail + ne));
            }
        }
        System.arraycopy(eligible, 0, children, cTail, ne);
        cTail += ne;
    }

    private void maskTarget(BatchBuffers buf, long cellBase, int task, TaskData taskData, int seedIdx) {
        int pos = plan.targetPosition[task];
        long i = cellBase + pos;
        buf.isTarget.set(U8, i, (byte) 1);
        boolean nullTarget = taskData.targetIsNull(seedIdx);
        buf.isNull.set(U8, i, nullTarget ? (byte) 1 : (byte) 0);
        if (nullTarget) {
            return; // the cell keeps its own value (Q3)
        }
        switch (plan.targetStype[task]) {
            case NUMERICAL -> buf.numericValues.set(F32, i * 4, taskData.targetNumerical(seedIdx));
            case TIMESTAMP -> MemorySegment.copy(taskData.segment(), taskData.targetTimestampOffset(seedIdx),
                    buf.timestampValues, i * TS_BYTES, TS_BYTES);
            case BOOLEAN -> buf.boolValues.set(U8, i, taskData.targetBoolean(seedIdx) ? (byte) 1 : (byte) 0);
            case CATEGORICAL -> buf.categoricalIds.set(U32, i * 4, taskData.targetCategorical(seedIdx));
            default -> throw new IllegalStateException("task target " + plan.targetStype[task]);
        }
    }

    /** Writes fk_adj for sequence {@code b}; collects the off-diagonal pairs; returns their count. */
    private int fillAdjacency(BatchBuffers buf, int b, int rows) {
        long r = maxRows;
        long base = b * r * r;
        MemorySegment adj = buf.fkAdj;
        int n = 0;
        for (int i = 0; i < rows; i++) {
            int g = rowGlobal[i];
            int oe = graph.outEnd(g);
            for (int k = graph.outStart(g); k < oe; k++) {
                int j = visited.id(graph.outNeighbour(k));
                if (j >= 0) {
                    adj.set(U8, base + i * r + j, (byte) 1);
                    if (j != i) {
                        if (n == pairI.length) {
                            pairI = Arrays.copyOf(pairI, n * 2);
                            pairJ = Arrays.copyOf(pairJ, n * 2);
                        }
                        pairI[n] = i;
                        pairJ[n++] = j;
                    }
                }
            }
        }
        return n;
    }

    private void ensureAdjacency(int npairs) {
        if (adjList.length < npairs) {
            adjList = new int[Math.max(npairs, adjList.length * 2)];
            bucket = new int[adjList.length];
        }
    }

    /** adj[i]: ascending distinct j; pairs come grouped by ascending i, each group in CSR order. */
    private void buildOutAdjacency(int npairs, int rows) {
        ensureAdjacency(npairs);
        int m = 0;
        int k = 0;
        for (int i = 0; i < rows; i++) {
            adjStart[i] = m;
            int start = m;
            while (k < npairs && pairI[k] == i) {
                int j = pairJ[k++];
                int pos = m;
                while (pos > start && adjList[pos - 1] > j) {
                    pos--;
                }
                if (pos > start && adjList[pos - 1] == j) {
                    continue; // a duplicate edge
                }
                System.arraycopy(adjList, pos, adjList, pos + 1, m - pos);
                adjList[pos] = j;
                m++;
            }
            degree[i] = m - start;
        }
        adjStart[rows] = m;
    }

    /** adj[j]: ascending distinct i with an edge i -> j (a stable bucket sort of the pairs by j). */
    private void buildInAdjacency(int npairs, int rows) {
        ensureAdjacency(npairs);
        Arrays.fill(counts, 0, rows + 1, 0);
        for (int k = 0; k < npairs; k++) {
            counts[pairJ[k] + 1]++;
        }
        for (int r = 0; r < rows; r++) {
            counts[r + 1] += counts[r];
        }
        for (int k = 0; k < npairs; k++) {
            bucket[counts[pairJ[k]]++] = pairI[k]; // ascending i within each bucket
        }
        int m = 0;
        int from = 0;
        for (int j = 0; j < rows; j++) {
            int to = counts[j]; // after the fill, counts[j] is the end of bucket j
            adjStart[j] = m;
            int start = m;
            for (int k = from; k < to; k++) {
                int i = bucket[k];
                if (m == start || adjList[m - 1] != i) {
                    adjList[m++] = i;
                }
            }
            degree[j] = m - start;
            from = to;
        }
        adjStart[rows] = m;
    }

    /**
     * The Cuthill-McKee variant of spec §11 over the sequence's rows, reversed into ranks, then
     * positions sorted by (padding, rank, position). Rows past {@code rows} have no cells and no
     * edges; the reference orders them last, which moves no used row's relative rank, so they are
     * left out.
     */
    private void writeRowPermutation(MemorySegment perm, long cellBase, int cells, int rows, BatchBuffers buf) {
        Arrays.fill(rcmVisited, 0, rows, false);
        // Start candidates: used rows by (degree, index), a stable bucket sort by degree; degrees do not
        // change during the walk, so the first unvisited candidate is the minimum and the cursor only
        // moves forward.
        Arrays.fill(counts, 0, rows + 1, 0);
        int nUsed = 0;
        for (int i = 0; i < rows; i++) {
            if (rowUsed[i]) {
                counts[degree[i] + 1]++;
                nUsed++;
            }
        }
        for (int d = 0; d < rows; d++) {
            counts[d + 1] += counts[d];
        }
        for (int i = 0; i < rows; i++) {
            if (rowUsed[i]) {
                startOrder[counts[degree[i]]++] = i;
            }
        }
        int usedCursor = 0;
        int anyCursor = 0;
        int count = 0;
        int[] queue = order; // BFS appends to order in dequeue order, so the queue is the order itself
        while (count < rows) {
            int start = -1;
            while (usedCursor < nUsed && rcmVisited[startOrder[usedCursor]]) {
                usedCursor++;
            }
            if (usedCursor < nUsed) {
                start = startOrder[usedCursor];
            } else {
                while (rcmVisited[anyCursor]) {
                    anyCursor++;
                }
                start = anyCursor;
            }
            int head = count;
            int tail = count;
            queue[tail++] = start;
            rcmVisited[start] = true;
            while (head < tail) {
                int node = queue[head++];
                count++;
                int nn = 0;
                int end = adjStart[node + 1];
                for (int k = adjStart[node]; k < end; k++) {
                    int j = adjList[k];
                    if (!rcmVisited[j]) {
                        if (nn == neighbours.length) {
                            neighbours = Arrays.copyOf(neighbours, nn * 2);
                        }
                        neighbours[nn++] = j;
                    }
                }
                // stable insertion sort by degree
                for (int a = 1; a < nn; a++) {
                    int v = neighbours[a];
                    int dv = degree[v];
                    int c = a - 1;
                    while (c >= 0 && degree[neighbours[c]] > dv) {
                        neighbours[c + 1] = neighbours[c];
                        c--;
                    }
                    neighbours[c + 1] = v;
                }
                for (int a = 0; a < nn; a++) {
                    int v = neighbours[a];
                    if (!rcmVisited[v]) {
                        rcmVisited[v] = true;
                        queue[tail++] = v;
                    }
                }
            }
        }
        for (int k = 0; k < rows; k++) {
            rank[order[k]] = rows - 1 - k;
        }
        MemorySegment rowIds = buf.seqRowIds;
        for (int p = 0; p < cells; p++) {
            cellKeys[p] = rank[Short.toUnsignedInt(rowIds.get(U16, (cellBase + p) * 2))];
        }
        writeSorted(perm, cellBase, cells, rows);
    }

    private void writeColumnPermutation(BatchBuffers buf, long cellBase, int cells) {
        MemorySegment columnIds = buf.columnIds;
        for (int p = 0; p < cells; p++) {
            cellKeys[p] = columnIds.get(U32, (cellBase + p) * 4);
        }
        writeSorted(buf.colPerm, cellBase, cells, counts.length - 2);
    }

    /**
     * Positions {@code [0, cells)} sorted by (key, position) with a stable counting sort over keys in
     * {@code [0, keyRange)}, then the padding positions in order.
     */
    private void writeSorted(MemorySegment perm, long cellBase, int cells, int keyRange) {
        Arrays.fill(counts, 0, keyRange + 1, 0);
        for (int p = 0; p < cells; p++) {
            counts[cellKeys[p] + 1]++;
        }
        for (int k = 0; k < keyRange; k++) {
            counts[k + 1] += counts[k];
        }
        for (int p = 0; p < cells; p++) {
            sortedPositions[counts[cellKeys[p]]++] = p;
        }
        for (int k = 0; k < cells; k++) {
            perm.set(U16, (cellBase + k) * 2, (short) sortedPositions[k]);
        }
        for (int k = cells; k < seqLen; k++) {
            perm.set(U16, (cellBase + k) * 2, (short) k);
        }
    }
}
