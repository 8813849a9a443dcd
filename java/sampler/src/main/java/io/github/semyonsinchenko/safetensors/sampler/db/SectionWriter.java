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

    /** A writer of the new file {@code file} (it must not exist). */
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

    /** The file written. */
    public Path file() {
        return file;
    }

    /** Bytes written so far (pending bits not counted). */
    public long position() {
        return flushed + pos;
    }

    /** Bits written so far with {@link #bit}, {@link #bits(int, int)} and {@link #appendBits}. */
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

    /** One byte. */
    public void u8(int v) throws IOException {
        room(1);
        buf[pos++] = (byte) v;
    }

    /** {@code n} values of {@code v} from {@code from} as u16s (or f16 bits), a buffer's worth at a time. */
    public void u16s(short[] v, int from, int n) throws IOException {
        values(v, from, n, Layouts.U16);
    }

    /** A u32 (or an i32). */
    public void u32(int v) throws IOException {
        room(4);
        LittleEndian.I32_IN_BYTES.set(buf, pos, v);
        pos += 4;
    }

    /** {@code n} values of {@code v} from {@code from} as u32s, a buffer's worth at a time. */
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

    /** An f32. */
    public void f32(float v) throws IOException {
        room(4);
        LittleEndian.F32_IN_BYTES.set(buf, pos, v);
        pos += 4;
    }

    /** An i64. */
    public void i64(long v) throws IOException {
        room(8);
        LittleEndian.I64_IN_BYTES.set(buf, pos, v);
        pos += 8;
    }

    /** {@code n} zero bytes. */
    public void zeros(long n) throws IOException {
        for (long left = n; left > 0; ) {
            room(1);
            int k = (int) Math.min(left, buf.length - pos);
            Arrays.fill(buf, pos, pos + k, (byte) 0);
            pos += k;
            left -= k;
        }
    }

    /** Zero bytes up to the next multiple of 8 (ends a section). */
    public void pad8() throws IOException {
        zeros(DatabaseLayout.pad8(position()) - position());
    }

    /** One bit, after the bits before it (LSB first). */
    public void bit(boolean b) throws IOException {
        bits(b ? 1 : 0, 1);
    }

    /** The low {@code count} bits of {@code value} (at most 8), LSB first. */
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

    /** {@code bits[0, n)} as a bitmap. */
    public void bitmap(boolean[] bits, int n) throws IOException {
        for (int i = 0; i < n; i++) {
            bit(bits[i]);
        }
    }

    /** Ends a bitmap: writes its last partial byte, unused high bits 0. */
    public void endBits() throws IOException {
        if (accBits > 0) {
            int last = acc;
            acc = 0;
            accBits = 0;
            u8(last);
        }
    }

    /** Ends a section: the last partial byte of a bitmap, then the padding to a multiple of 8. */
    public void endSection() throws IOException {
        endBits();
        pad8();
    }

    /** Appends {@code len} bytes of {@code b} from {@code off}. */
    public void bytes(byte[] b, int off, int len) throws IOException {
        for (int done = 0; done < len; ) {
            room(1);
            int k = Math.min(len - done, buf.length - pos);
            System.arraycopy(b, off + done, buf, pos, k);
            pos += k;
            done += k;
        }
    }

    /** Appends the whole file {@code piece} as bytes, copied channel to channel (no pass through the heap). */
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
     * Appends the first {@code nbits} bits of the bitmap in {@code piece} (read whole: a piece is
     * one task's rows / 8 bytes), after the bits before them: byte-aligned as they are, otherwise
     * shifted into the pending byte.
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
     * Appends one section made of pieces, in order: the first {@code rows[i]} bits of each piece of
     * a bitmap section, or each piece's bytes, then ends the section.
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

    /** Writes everything buffered and forces it to the storage device (for writers that publish by rename). */
    public void sync() throws IOException {
        drain();
        channel.force(false);
    }

    /**
     * Writes what is buffered (a pending partial byte of bits too) and closes; with an expected
     * size, fails if the file has any other.
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

    /** Closes the file; what {@link #finish} did not write is lost. Idempotent. */
    @Override
    public void close() throws IOException {
        if (!closed) {
            closed = true;
            channel.close();
        }
    }
}
