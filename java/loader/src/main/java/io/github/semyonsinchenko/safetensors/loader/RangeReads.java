package io.github.semyonsinchenko.safetensors.loader;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.util.functional.FutureIO;

/**
 * The loader's only way to touch file bytes: open with the listing's {@link FileStatus} (so S3A
 * issues no HEAD) and read one range with {@code readVectored}, which each store implements its
 * own best way (one GET on S3A's classic stream, an asynchronous channel locally, positioned reads
 * on HDFS). Public so that other byte-range readers (the Spark connector's remote reads) request
 * bytes the same way.
 */
public final class RangeReads {
    /** Hadoop's standard open option: we read ranges, never stream the file sequentially. */
    public static final String READ_POLICY = "fs.option.openfile.read.policy";

    private RangeReads() {
    }

    /**
     * Opens a file for ranged reads, passing its listing status so that object stores skip their
     * own HEAD request, with the vector/random read policy.
     *
     * @param fs the file's file system
     * @param status the file's status from a listing or {@code getFileStatus}
     * @return the open stream; the caller closes it
     * @throws IOException if the file cannot be opened
     */
    public static FSDataInputStream open(FileSystem fs, FileStatus status) throws IOException {
        return FutureIO.awaitFuture(fs.openFile(status.getPath())
                .withFileStatus(status)
                .opt(READ_POLICY, "vector, random")
                .build());
    }

    /**
     * Reads exactly {@code dst.byteSize()} bytes at {@code offset} into {@code dst} (one request).
     * The store may hand back its own buffer (the checksummed local file system returns slices of a
     * merged read), so the bytes are copied from whatever comes back unless it is {@code dst} itself.
     *
     * @param in a stream from {@link #open}
     * @param offset the file offset of the first byte
     * @param dst receives the bytes; at most {@code Integer.MAX_VALUE} of them
     * @param file names the file in error messages
     * @throws EOFException when fewer bytes arrive than asked for
     * @throws IOException if the read fails
     * @throws ArithmeticException if {@code dst} is larger than {@code Integer.MAX_VALUE} bytes
     */
    public static void readInto(FSDataInputStream in, long offset, MemorySegment dst, String file) throws IOException {
        int length = Math.toIntExact(dst.byteSize());
        if (length == 0) {
            return;
        }
        ByteBuffer target = dst.asByteBuffer();
        AtomicBoolean targetUsed = new AtomicBoolean();
        FileRange range = FileRange.createFileRange(offset, length);
        // Fresh buffers only: S3A's heap path writes from array() index 0, so never hand out a slice
        // of a shared heap array; our target is a direct buffer of exactly the range.
        in.readVectored(List.of(range), size -> size == length && targetUsed.compareAndSet(false, true)
                ? target : ByteBuffer.allocateDirect(size));
        ByteBuffer got = FutureIO.awaitFuture(range.getData());
        if (got.remaining() != length) {
            throw new EOFException(String.format(Locale.ROOT, "%s: read of [%d, %d) returned %d of %d bytes",
                    file, offset, offset + length, got.remaining(), length));
        }
        if (got != target) { // capacity == length, so a full target needs no copy
            MemorySegment.copy(MemorySegment.ofBuffer(got), 0, dst, 0, length);
        }
    }

    /** Reads exactly {@code length} bytes at {@code offset} into a new heap array (headers, index files). */
    static byte[] readBytes(FSDataInputStream in, long offset, int length, String file) throws IOException {
        byte[] out = new byte[length];
        if (length > 0) {
            readInto(in, offset, MemorySegment.ofArray(out), file);
        }
        return out;
    }
}
