package io.github.semyonsinchenko.safetensors.preprocess.graph;

import io.github.semyonsinchenko.safetensors.preprocess.partition.Parts;
import java.nio.file.Path;
import java.util.List;

/**
 * Where each CSR direction's parts are and in which order they concatenate.
 *
 * @param outDir the outgoing lists' parts
 * @param outParts their partitions, in order
 * @param inDir the incoming lists' parts
 * @param inParts their partitions, in order
 * @param edges the edges
 */
record Csr(Path outDir, int[] outParts, Path inDir, int[] inParts, long edges) {

    /** The partitions of {@code infos}, in partition order. */
    static int[] ids(List<Parts.Info> infos) {
        return Parts.inOrder(infos).stream().mapToInt(Parts.Info::partition).toArray();
    }

}
