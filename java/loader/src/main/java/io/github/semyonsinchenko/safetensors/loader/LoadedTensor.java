package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.Slice;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * One tensor handed out by the loader, or the slice of it that was asked for: a read-only view of
 * its chunk's off-heap buffer when its bytes lie there in one run, else (a strided slice, or a
 * conversion) a buffer of its own filled in one pass. Close it when done: the chunk's memory is
 * freed when its last tensor is closed (or when the loader is). After {@link #close()},
 * {@link #data()} throws.
 */
public final class LoadedTensor implements AutoCloseable {
    private final String file;
    private final String name;
    private final Dtype dtype;
    private final Dtype storedDtype;
    private final long[] shape;
    private final Slice slice;
    private final long[] tensorShape;
    private final MemorySegment data;
    private final Runnable release;
    private boolean closed;

    LoadedTensor(String file, String name, Dtype dtype, Dtype storedDtype, long[] shape, Slice slice,
                 long[] tensorShape, MemorySegment data, Runnable release) {
        this.file = file;
        this.name = name;
        this.dtype = dtype;
        this.storedDtype = storedDtype;
        this.shape = shape;
        this.slice = slice;
        this.tensorShape = tensorShape;
        this.data = data;
        this.release = release;
    }

    /** {@return the file it came from} */
    public String file() {
        return file;
    }

    /** {@return the tensor's name in the checkpoint} */
    public String name() {
        return name;
    }

    /** {@return the dtype of {@link #data()} (the converted one if a conversion was asked for and applies)} */
    public Dtype dtype() {
        return dtype;
    }

    /** {@return the dtype in the file} */
    public Dtype storedDtype() {
        return storedDtype;
    }

    /** {@return a copy of the shape of {@link #data()}: the slice's (the tensor's when loaded whole)} */
    public long[] shape() {
        return shape.clone();
    }

    /** {@return the slice loaded; {@link Slice#isWhole()} when the whole tensor was} */
    public Slice slice() {
        return slice;
    }

    /** {@return a copy of the whole tensor's shape in the file} */
    public long[] tensorShape() {
        return tensorShape.clone();
    }

    /**
     * This tensor as a core {@link Tensor} view of {@link #data()} (the typed getters,
     * {@code toFloatArray}, further slices, conversions), valid until this tensor is closed.
     *
     * @return the view
     */
    public Tensor asTensor() {
        return Tensor.of(name, dtype, shape, data());
    }

    /** {@return read-only little-endian bytes} */
    public synchronized MemorySegment data() {
        if (closed) {
            throw new IllegalStateException("tensor " + name + " of " + file + " was closed");
        }
        return data;
    }

    /** {@return bytes of {@link #data()}} */
    public long byteSize() {
        return data.byteSize();
    }

    /** {@return {@link #digest(String, MemorySegment)} of this tensor's name and data} */
    public long digest() {
        return digest(name, data());
    }

    /**
     * {@code CRC32C(UTF-8 name) << 32 | CRC32C(bytes)}: a cheap content check. Summed over tensors it
     * does not depend on their order, so the sums of several ranks add up to a single-rank load's.
     *
     * @param name the tensor's name
     * @param data its bytes
     * @return the digest
     */
    public static long digest(String name, MemorySegment data) {
        CRC32C n = new CRC32C();
        n.update(name.getBytes(StandardCharsets.UTF_8));
        CRC32C d = new CRC32C();
        for (long at = 0; at < data.byteSize(); at += 1 << 30) { // a ByteBuffer holds at most 2 GiB
            d.update(data.asSlice(at, Math.min(1 << 30, data.byteSize() - at)).asByteBuffer());
        }
        return (n.getValue() << 32) | d.getValue();
    }

    /** Releases this tensor's hold on its memory; idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        release.run();
    }
}
