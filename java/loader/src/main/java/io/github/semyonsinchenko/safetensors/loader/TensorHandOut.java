package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SliceLayout;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Turns a planned tensor of an arrived chunk into a {@link LoadedTensor}: a read-only view of the
 * chunk's buffer when its slice lies there as one run and no conversion applies, otherwise a buffer
 * of its own, filled in one pass from the parts of the chunk's buffer where its runs landed (core's
 * {@link SliceLayout#copyRuns}: slices and conversions through the kernels), after which the tensor
 * no longer holds the chunk. Owns the arenas of those buffers until their tensors (or the loader)
 * close them.
 */
final class TensorHandOut {
    private final Dtype convertTo;
    private final Set<Arena> ownArenas = ConcurrentHashMap.newKeySet();

    TensorHandOut(Dtype convertTo) {
        this.convertTo = convertTo;
    }

    /** The dtype {@code stored} is handed out as: the conversion target for floats a kernel converts. */
    Dtype target(Dtype stored) {
        boolean convert = convertTo != null && convertTo != stored && stored.isFloatingPoint()
                && Kernels.canConvert(stored, convertTo);
        return convert ? convertTo : stored;
    }

    /**
     * Hands out {@code t} from {@code buffer}, the chunk's bytes. {@code releaseChunk} gives back this
     * tensor's hold on the chunk: when the tensor is closed if it is a view, right away otherwise.
     */
    LoadedTensor handOut(String file, MemorySegment buffer, PlannedTensor t, Runnable releaseChunk) {
        SliceLayout layout = t.slice();
        Dtype stored = t.dtype();
        Dtype target = target(stored);
        long[] tensorShape = t.info().shape();
        if (target == stored && layout.isContiguous()) {
            MemorySegment bytes = buffer.asSlice(t.offsetInChunk(), layout.byteSize()).asReadOnly();
            return new LoadedTensor(file, t.name(), stored, stored, layout.shape(), layout.slice(), tensorShape, bytes,
                    releaseChunk);
        }
        long outBytes = target.storageBytes(layout.elementCount());
        long runElements = layout.runBytes() * 8 / stored.bits();
        long outRun = target == stored ? layout.runBytes() : runElements * target.byteSize();
        Arena arena = Arena.ofShared();
        try {
            MemorySegment out = arena.allocate(Math.max(1, outBytes), 64).asSlice(0, outBytes);
            long at = 0;
            for (PlannedTensor.Part p : t.parts()) {
                layout.copyRuns(buffer.asSlice(p.bufferOffset(), p.length()), p.tensorOffset(), p.firstRun(),
                        p.firstRun() + p.runs(), out, at, target);
                at += p.runs() * outRun;
            }
            ownArenas.add(arena);
            return new LoadedTensor(file, t.name(), target, stored, layout.shape(), layout.slice(), tensorShape,
                    out.asReadOnly(), () -> {
                        if (ownArenas.remove(arena)) {
                            arena.close();
                        }
                    });
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        } finally {
            releaseChunk.run(); // the tensor's own buffer no longer needs the chunk
        }
    }

    /** Frees every buffer still held by a tensor not closed; their tensors throw on access afterwards. */
    void closeAll() {
        for (Arena a : ownArenas) {
            if (ownArenas.remove(a)) {
                a.close();
            }
        }
    }
}
