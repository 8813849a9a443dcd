package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.HeaderFraming;
import io.github.semyonsinchenko.safetensors.format.SafetensorsException;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.format.Violation;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException;
import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.SequencedMap;

/**
 * A validated safetensors file mapped into memory. Tensors are read-only {@link MemorySegment}
 * slices of the mapping: no tensor byte is copied onto the heap.
 *
 * <h2>Arena ownership</h2>
 * Each {@code SafetensorsFile} owns exactly one {@link MappedFile} (the mapping and its arena),
 * created by {@link #open} and closed by {@link #close()}, which unmaps the file at once (no waiting
 * for GC; files over 2 GiB map as one segment). The {@link Tensor}s and segments it hands out are
 * borrowed views: they have no {@code close()}, and any access after the file is closed throws
 * {@link IllegalStateException} (the JDK checks every segment access against its arena, so a late
 * read fails cleanly rather than touching unmapped memory).
 * <ul>
 *   <li>{@link MappedFile.Sharing#SHARED} (the default): any thread may read the segments;
 *       {@code close()} performs a JVM-wide handshake (microseconds to a few milliseconds), so it
 *       suits files opened once and read by many threads.</li>
 *   <li>{@link MappedFile.Sharing#CONFINED}: only the opening thread may read or close; close is
 *       cheap. Suits one task reading one file, e.g. a Spark partition reader.</li>
 * </ul>
 * {@code close()} is idempotent.
 *
 * <h2>A file truncated while mapped</h2>
 * If another process truncates the file while it is mapped, reads of the lost pages fault. The
 * {@link Tensor} accessors and the {@code Kernels} calls turn that into a
 * {@link MappedFileFaultException} naming this file and the tensor (the mapping is registered with
 * {@link MappedFiles} while open, with this file's tensors as its parts). Reads of {@link Tensor#data()} by other code get the JDK's
 * {@link InternalError} instead; the JDK raises that error asynchronously in compiled code, so it
 * can surface a little after the faulting read.
 */
public final class SafetensorsFile implements AutoCloseable, Iterable<Tensor> {

    private final Path path;
    private final Header header;
    private final MappedFile mapped;
    private final TensorTable tensors;
    private final TensorOwner owner = new TensorOwner() {
        @Override
        void ensureOpen() {
            SafetensorsFile.this.ensureOpen();
        }

        @Override
        String source() {
            return path.toString();
        }

        @Override
        RuntimeException accessFailure(Tensor t, Throwable e) {
            return SafetensorsFile.this.accessFailure(t, e);
        }
    };

    private SafetensorsFile(Path path, Header header, MappedFile mapped) {
        this.path = path;
        this.header = header;
        this.mapped = mapped;
        this.tensors = new TensorTable(owner, header, mapped.segment(), path.toString(), "file");
        mapped.nameParts(this::tensorAtFileOffset);
    }

    /** The name of the tensor holding byte {@code offset} of the file, or null (header, or past the end). */
    private String tensorAtFileOffset(long offset) {
        long rel = offset - header.dataOffset();
        int lo = 0;
        int hi = tensors.size() - 1;
        while (lo <= hi) { // tensors are in offset order
            int mid = (lo + hi) >>> 1;
            TensorInfo info = tensors.list().get(mid).info();
            if (rel < info.begin()) {
                hi = mid - 1;
            } else if (rel >= info.begin() + info.byteSize()) {
                lo = mid + 1;
            } else {
                return info.name();
            }
        }
        return null;
    }

    /**
     * What a failed access to {@code t}'s bytes means: a closed file, or a fault on a page lost to a
     * truncation. Anything else is rethrown unchanged.
     */
    RuntimeException accessFailure(Tensor t, Throwable e) {
        if (!mapped.isOpen()) {
            return new IllegalStateException(closedMessage() + " (reading tensor \"" + t.name() + "\")", e);
        }
        if (MappedFiles.isMemoryFault(e)) {
            return new MappedFileFaultException(new SafetensorsException(Violation.FILE_CHANGED_WHILE_MAPPED,
                    path.toString(), t.name(), "reading its bytes faulted", e));
        }
        if (e instanceof RuntimeException r) {
            return r;
        }
        throw (Error) e;
    }

    /**
     * Opens, validates and maps {@code path} with a {@link MappedFile.Sharing#SHARED} arena.
     *
     * @param path the file
     * @return the open file
     * @throws IOException if the file cannot be read or mapped, or breaks a format rule
     */
    public static SafetensorsFile open(Path path) throws IOException {
        return open(path, MappedFile.Sharing.SHARED);
    }

    /**
     * Opens, validates and maps {@code path}. The header is read from the mapping; only its 8 + N
     * bytes are touched before the tensors are handed out.
     *
     * @param path the file
     * @param sharing which threads may read the mapping
     * @return the open file
     * @throws io.github.semyonsinchenko.safetensors.format.SafetensorsException if the file breaks a
     *     format rule; the message names the file, the tensor and the rule
     * @throws IOException if the file cannot be read or mapped
     */
    public static SafetensorsFile open(Path path, MappedFile.Sharing sharing) throws IOException {
        MappedFile mapped = MappedFile.open(path, sharing);
        boolean success = false;
        try {
            MemorySegment bytes = mapped.segment();
            // A guarded copy: the file truncated under this read is the typed exception, not a fault.
            Header header = HeaderFraming.read((position, buffer) -> MappedFiles.copy(bytes, position,
                    MemorySegment.ofArray(buffer), 0, buffer.length), mapped.size(), path.toString());
            SafetensorsFile file = new SafetensorsFile(path, header, mapped);
            success = true;
            return file;
        } finally {
            if (!success) {
                mapped.close();
            }
        }
    }

    /** {@return the file} */
    public Path path() {
        return path;
    }

    /** {@return the validated header (also available after close)} */
    public Header header() {
        return header;
    }

    /** {@return {@code __metadata__} in file order} */
    public SequencedMap<String, String> metadata() {
        return header.metadata();
    }

    /** {@return tensors in offset order} */
    public List<Tensor> tensors() {
        ensureOpen();
        return tensors.list();
    }

    @Override
    public Iterator<Tensor> iterator() {
        return tensors().iterator();
    }

    /** {@return the number of tensors} */
    public int size() {
        return tensors.size();
    }

    /**
     * Whether the file has a tensor called {@code name}.
     *
     * @param name a tensor name
     * @return whether the file has it
     */
    public boolean contains(String name) {
        return tensors.contains(name);
    }

    /**
     * The tensor called {@code name}, in O(1).
     *
     * @param name a tensor name
     * @return the tensor
     * @throws NoSuchElementException naming the file when there is no such tensor
     */
    public Tensor tensor(String name) {
        ensureOpen();
        return tensors.get(name);
    }

    /**
     * The tensors by name, in offset order (unmodifiable): what Hugging Face's {@code load_file}
     * returns, as views of the mapping rather than copies.
     *
     * @return the tensors by name
     */
    public Map<String, Tensor> asMap() {
        ensureOpen();
        return tensors.byName();
    }

    /** {@return whether {@link #close()} has not been called} */
    public boolean isOpen() {
        return mapped.isOpen();
    }

    void ensureOpen() {
        if (!mapped.isOpen()) {
            throw new IllegalStateException(closedMessage());
        }
    }

    String closedMessage() {
        return path + " is closed";
    }

    /** Unmaps the file. Idempotent; with a confined arena, only the opening thread may call it. */
    @Override
    public void close() {
        mapped.close();
    }

    @Override
    public String toString() {
        return "SafetensorsFile[" + path + ", " + tensors.size() + " tensors, " + header.fileSize() + " bytes"
                + (mapped.isOpen() ? "" : ", closed") + "]";
    }
}
