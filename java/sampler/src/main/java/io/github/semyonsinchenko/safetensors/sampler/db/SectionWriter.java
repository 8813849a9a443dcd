package io.github.semyonsinchenko.safetensors.sampler.db;

import io.github.semyonsinchenko.safetensors.format.LittleEndian;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Appends to a new file, in order, what database files are made of ({@link DatabaseLayout}):
 * little-endian values, LSB-first bits, zero padding to a multiple of 8 bytes, and whole pieces
 * written by other writers (the parts a parallel preprocessor's tasks wrote, appended as bytes or
 * joined bit by bit). The one writer of the format: {@link DatabaseWriter} opens each database
 * file with one and checks its size, and a preprocessor's tasks write the pieces of a section
 * with one each.
 *
 * <p>Values go through an in-memory buffer that reaches the file when full, so a value costs no
 * call beyond its store (no synchronization, unlike a {@code BufferedOutputStream}). Bits collect
 * in a pending byte: a value written while bits are pending is a layout error and fails. Not
 * thread-safe.
 */
public final class SectionWriter implements AutoCloseable {
    private static final int BUFFER_BYTES = 1 << 16;

    private final Path file;
    private final FileChannel channel;
    private final long expectedSize;
    private final byte[] buf = new byte[BUFFER_BYTES];
    private final MemorySegment seg = MemorySegment.ofArray(buf);
    private int pos;
    /** Bytes that reached the channel. */
    private long flushed;
    private long bits;
    private int acc;
    private int accBits;
    private boolean closed;

    private SectionWriter(Path file, long expectedSize) throws IOException {
        this.file = file;
        this.expectedSize = expectedSize;
        this.channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    }

    /**
     * A writer of a new file.
     *
     * @param file the file to create; it must not exist
     * @return the writer, at the file's first byte
     * @throws IOException if the file exists or cannot be created
     */
    public static SectionWriter create(Path file) throws IOException {
        return new SectionWriter(file, -1);
    }

    /**
     * A writer of the new file {@code file} whose layout gives it {@code expectedSize} bytes:
     * {@link #finish} fails if it holds any other number.
     */
    static SectionWriter create(Path file, long expectedSize) throws IOException {
        return new SectionWriter(file, expectedSize);
    }

    /**
     * The file written.
     *
     * @return its path
     */
    public Path file() {
        return file;
    }

    /**
     * Bytes written so far.
     *
     * @return the bytes written, not counting the bits of an unfinished byte
     */
    public long position() {
        return flushed + pos;
    }

    /**
     * Bits written so far with {@link #bit}, {@link #bits(int, int)}, {@link #bitmap} and {@link #appendBits}.
     *
     * @return the number of bits
     */
    public long bitCount() {
        return bits;
    }

    /** Room for {@code n} more bytes in the buffer; no bits may be pending before a value. */
    private void room(int n) throws IOException {
        if (accBits != 0) {
            throw new IllegalStateException(file + ": a value after " + accBits + " bits of an unfinished byte;"
                    + " end the bitmap first");
        }
        if (pos > buf.length - n) {
            drain();
        }
    }

    private void drain() throws IOException {
        ByteBuffer b = ByteBuffer.wrap(buf, 0, pos);
        while (b.hasRemaining()) {
            channel.write(b);
        }
        flushed += pos;
        pos = 0;
    }

    /**
     * Appends one byte.
     *
     * @param v the byte, in the low 8 bits
     * @throws IOException if the file cannot be written
     */
    public void u8(int v) throws IOException {
        room(1);
        buf[pos++] = (byte) v;
    }

    /**
     * Appends u16 values (or f16 bits), a buffer's worth at a time.
     *
     * @param v the values
     * @param from the index of the first value to write
     * @param n how many values to write
     * @throws IOException if the file cannot be written
     */
    public void u16s(short[] v, int from, int n) throws IOException {
        values(v, from, n, Layouts.U16);
    }

    /**
     * Appends a u32 (or an i32).
     *
     * @param v the value
     * @throws IOException if the file cannot be written
     */
    public void u32(int v) throws IOException {
        room(4);
        LittleEndian.I32_IN_BYTES.set(buf, pos, v);
        pos += 4;
    }

    /**
     * Appends u32 values (or i32s), a buffer's worth at a time.
     *
     * @param v the values
     * @param from the index of the first value to write
     * @param n how many values to write
     * @throws IOException if the file cannot be written
     */
    public void u32s(int[] v, int from, int n) throws IOException {
        values(v, from, n, Layouts.U32);
    }

    /** {@code n} elements of the primitive array {@code array} from {@code from}, each as {@code layout} (a bulk copy). */
    private void values(Object array, int from, int n, ValueLayout layout) throws IOException {
        int width = (int) layout.byteSize();
        for (int done = 0; done < n; ) {
            room(width);
            int k = Math.min(n - done, (buf.length - pos) / width);
            MemorySegment.copy(array, from + done, seg, layout, pos, k);
            pos += width * k;
            done += k;
        }
    }

    /**
     * Appends an f32.
     *
     * @param v the value
     * @throws IOException if the file cannot be written
     */
    public void f32(float v) throws IOException {
        room(4);
        LittleEndian.F32_IN_BYTES.set(buf, pos, v);
        pos += 4;
    }

    /**
     * Appends an i64.
     *
     * @param v the value
     * @throws IOException if the file cannot be written
     */
    public void i64(long v) throws IOException {
        room(8);
        LittleEndian.I64_IN_BYTES.set(buf, pos, v);
        pos += 8;
    }

    /**
     * Appends zero bytes.
     *
     * @param n how many
     * @throws IOException if the file cannot be written
     */
    public void zeros(long n) throws IOException {
        for (long left = n; left > 0; ) {
            room(1);
            int k = (int) Math.min(left, buf.length - pos);
            Arrays.fill(buf, pos, pos + k, (byte) 0);
            pos += k;
            left -= k;
        }
    }

    /**
     * Appends zero bytes up to the next multiple of 8 (what ends a section).
     *
     * @throws IOException if the file cannot be written
     */
    public void pad8() throws IOException {
        zeros(DatabaseLayout.pad8(position()) - position());
    }

    /**
     * Appends one bit after the bits before it (LSB first).
     *
     * @param b the bit
     * @throws IOException if the file cannot be written
     */
    public void bit(boolean b) throws IOException {
        bits(b ? 1 : 0, 1);
    }

    /**
     * Appends bits after the bits before it (LSB first).
     *
     * @param value the bits, in its low {@code count} bits
     * @param count how many, at most 8
     * @throws IOException if the file cannot be written
     */
    public void bits(int value, int count) throws IOException {
        acc |= (value & ((1 << count) - 1)) << accBits;
        accBits += count;
        bits += count;
        if (accBits >= 8) {
            if (pos == buf.length) {
                drain();
            }
            buf[pos++] = (byte) acc;
            acc >>>= 8;
            accBits -= 8;
        }
    }

    /**
     * Appends bits after the bits before it (LSB first).
     *
     * @param bits the bits
     * @param n how many of them, from the first
     * @throws IOException if the file cannot be written
     */
    public void bitmap(boolean[] bits, int n) throws IOException {
        for (int i = 0; i < n; i++) {
            bit(bits[i]);
        }
    }

    /**
     * Ends a bitmap: appends its last partial byte, unused high bits 0 (nothing when the bits fill whole bytes).
     *
     * @throws IOException if the file cannot be written
     */
    public void endBits() throws IOException {
        if (accBits > 0) {
            int last = acc;
            acc = 0;
            accBits = 0;
            u8(last);
        }
    }

    /**
     * Ends a section: the last partial byte of a bitmap, then the padding to a multiple of 8.
     *
     * @throws IOException if the file cannot be written
     */
    public void endSection() throws IOException {
        endBits();
        pad8();
    }

    /**
     * Appends bytes.
     *
     * @param b the array
     * @param off the index of the first byte to write
     * @param len how many bytes
     * @throws IOException if the file cannot be written
     */
    public void bytes(byte[] b, int off, int len) throws IOException {
        for (int done = 0; done < len; ) {
            room(1);
            int k = Math.min(len - done, buf.length - pos);
            System.arraycopy(b, off + done, buf, pos, k);
            pos += k;
            done += k;
        }
    }

    /**
     * Appends a whole file as bytes, copied channel to channel (no pass through the heap).
     *
     * @param piece the file, read from its first byte to its end
     * @throws IOException if a file cannot be read or written, or {@code piece} shrinks while it is copied
     */
    public void appendBytes(Path piece) throws IOException {
        room(0);
        drain(); // the channel's position is then the end of what was written
        try (FileChannel in = FileChannel.open(piece, StandardOpenOption.READ)) {
            long size = in.size();
            for (long done = 0; done < size; ) {
                long n = in.transferTo(done, size - done, channel);
                if (n <= 0) { // the piece shrank while being copied
                    throw new IOException(String.format(Locale.ROOT, "%s: %d of %d bytes copied", piece, done, size));
                }
                done += n;
            }
            flushed += size;
        }
    }

    /**
     * Appends the first bits of the bitmap in a file, after the bits before them: byte-aligned as they are, otherwise shifted into the pending byte. The file is read whole (a piece holds one task's rows).
     *
     * @param piece the file of an LSB-first bitmap
     * @param nbits how many of its bits to append
     * @throws IOException if a file cannot be read or written, or {@code piece} holds fewer bits
     */
    public void appendBits(Path piece, long nbits) throws IOException {
        byte[] b = Files.readAllBytes(piece);
        int whole = (int) (nbits >>> 3);
        int rest = (int) (nbits & 7);
        if (b.length < whole + (rest > 0 ? 1 : 0)) {
            throw new IOException(piece + ": bitmap piece shorter than " + nbits + " bits");
        }
        if (accBits == 0) {
            bytes(b, 0, whole);
            bits += 8L * whole;
        } else {
            for (int i = 0; i < whole; i++) {
                bits(b[i] & 0xff, 8);
            }
        }
        if (rest > 0) {
            bits(b[whole], rest);
        }
    }

    /**
     * Appends one section made of pieces, in order, then ends it: the first {@code rows[i]} bits of each piece of a bitmap section, each piece's bytes otherwise.
     *
     * @param section the section's kind
     * @param pieces the files of its pieces, in order
     * @param rows the rows of each piece
     * @throws IOException if a file cannot be read or written
     */
    public void appendSection(DatabaseLayout.Section section, List<Path> pieces, long[] rows) throws IOException {
        for (int i = 0; i < pieces.size(); i++) {
            if (section.isBitmap()) {
                appendBits(pieces.get(i), rows[i]);
            } else {
                appendBytes(pieces.get(i));
            }
        }
        endSection();
    }

    /**
     * Writes everything buffered and forces the file to the storage device (for writers that publish by rename).
     *
     * @throws IOException if the file cannot be written
     */
    public void sync() throws IOException {
        drain();
        channel.force(false);
    }

    /**
     * Writes what is buffered (a pending partial byte of bits too) and closes; a file opened with an expected size must have exactly that many bytes.
     *
     * @throws IOException if the file cannot be written
     * @throws IllegalStateException if the file does not have its expected size
     */
    public void finish() throws IOException {
        endBits();
        drain();
        close();
        if (expectedSize >= 0 && flushed != expectedSize) {
            throw new IllegalStateException(String.format(Locale.ROOT, "%s: wrote %d bytes, the layout needs %d",
                    file, flushed, expectedSize));
        }
    }

    /**
     * Closes the file; what {@link #finish} did not write is lost. Idempotent.
     *
     * @throws IOException if the file cannot be closed
     */
    @Override
    public void close() throws IOException {
        if (!closed) {
            closed = true;
            channel.close();
        }
    }
}
