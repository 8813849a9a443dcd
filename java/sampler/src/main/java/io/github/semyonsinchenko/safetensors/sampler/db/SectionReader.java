package io.github.semyonsinchenko.safetensors.sampler.db;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads back, in order, the little-endian values and LSB-first bits a {@link SectionWriter} wrote
 * to a piece of a section (a preprocessor folds statistics over its own pieces before it writes
 * the final file). Not thread-safe.
 */
public final class SectionReader implements AutoCloseable {
    private final Path file;
    private final InputStream in;
    private final byte[] buf = new byte[1 << 16];
    private int pos;
    private int end;
    private int bits;
    private int bitsLeft;

    /**
     * A reader of a file from its first byte.
     *
     * @param file the file
     * @throws IOException if the file cannot be opened
     */
    public SectionReader(Path file) throws IOException {
        this.file = file;
        this.in = Files.newInputStream(file);
    }

    /**
     * The u32 values of a whole file (a piece holds one task's rows, so it fits an array).
     *
     * @param piece the file
     * @return its values, in order
     * @throws IOException if the file cannot be read or is not a whole number of u32 values
     */
    public static int[] u32s(Path piece) throws IOException {
        byte[] bytes = Files.readAllBytes(piece);
        if (bytes.length % 4 != 0) {
            throw new IOException(piece + ": " + bytes.length + " bytes are not a whole number of u32 values");
        }
        return MemorySegment.ofArray(bytes).toArray(Layouts.U32);
    }

    /** At least {@code n} unread bytes in the buffer, or EOFException. */
    private void need(int n) throws IOException {
        if (end - pos >= n) {
            return;
        }
        System.arraycopy(buf, pos, buf, 0, end - pos);
        end -= pos;
        pos = 0;
        while (end < n) {
            int k = in.read(buf, end, buf.length - end);
            if (k < 0) {
                throw new EOFException(file + ": the piece ends early");
            }
            end += k;
        }
    }

    /**
     * Reads the next i64.
     *
     * @return the value
     * @throws IOException if the file cannot be read
     * @throws java.io.EOFException if the file ends first
     */
    public long i64() throws IOException {
        need(8);
        long v = (long) LittleEndian.I64_IN_BYTES.get(buf, pos);
        pos += 8;
        return v;
    }

    /**
     * Reads the next bit (LSB first).
     *
     * @return the bit
     * @throws IOException if the file cannot be read
     * @throws java.io.EOFException if the file ends first
     */
    public boolean bit() throws IOException {
        if (bitsLeft == 0) {
            need(1);
            bits = buf[pos++] & 0xff;
            bitsLeft = 8;
        }
        boolean b = (bits & 1) != 0;
        bits >>>= 1;
        bitsLeft--;
        return b;
    }

    /**
     * Closes the file.
     *
     * @throws IOException if it cannot be closed
     */
    @Override
    public void close() throws IOException {
        in.close();
    }
}
