package io.github.semyonsinchenko.safetensors.preprocess;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Writing a file from ordered Spark partitions without collecting it: each partition writes its
 * piece of every section to its own part file ({@link Out}); the driver then concatenates the
 * pieces in partition order ({@link Assembler}). Bitmaps are joined bit by bit, so partitions may
 * hold any number of rows.
 */
final class Parts {
    private Parts() {}

    /** What a partition wrote: its index, its row count and, per section, its length in bits or bytes. */
    record Info(int partition, long rows, long[] lengths) implements Serializable {}

    static Path partFile(Path dir, int section, int partition) {
        return dir.resolve(String.format(Locale.ROOT, "s%03d-p%06d", section, partition));
    }

    /** The infos sorted by partition, the order parts are concatenated in. */
    static List<Info> inOrder(List<Info> infos) {
        List<Info> s = new ArrayList<>(infos);
        s.sort(Comparator.comparingInt(Info::partition));
        return s;
    }

    /** An assembled file must have exactly the size the format gives it. */
    static void checkSize(Path file, long expected) throws IOException {
        long actual = Files.size(file);
        if (actual != expected) {
            throw new IllegalStateException(String.format(Locale.ROOT, "%s: wrote %d bytes, the format needs %d", file,
                    actual, expected));
        }
    }

    /**
     * The sections of one partition; each is written to a temporary name and renamed on
     * {@link #commit}, so a retried or speculative attempt never leaves half a part behind.
     */
    static final class Out implements Closeable {
        private final Path dir;
        private final int partition;
        private final String attempt;
        private final Section[] sections;

        Out(String dir, int partition, int sectionCount) {
            this.dir = Path.of(dir);
            this.partition = partition;
            this.attempt = Long.toHexString(Double.doubleToLongBits(Math.random()));
            this.sections = new Section[sectionCount];
            try {
                Files.createDirectories(this.dir);
                for (int s = 0; s < sectionCount; s++) {
                    sections[s] = new Section(temp(s));
                }
            } catch (IOException e) {
                close();
                throw new UncheckedIOException(e);
            }
        }

        private Path temp(int section) {
            return dir.resolve(partFile(dir, section, partition).getFileName() + "." + attempt + ".tmp");
        }

        Section section(int s) {
            return sections[s];
        }

        Info commit(long rows) {
            long[] lengths = new long[sections.length];
            try {
                for (int s = 0; s < sections.length; s++) {
                    lengths[s] = sections[s].finish();
                    Files.move(temp(s), partFile(dir, s, partition), StandardCopyOption.REPLACE_EXISTING,
                            StandardCopyOption.ATOMIC_MOVE);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return new Info(partition, rows, lengths);
        }

        @Override
        public void close() {
            for (int s = 0; s < sections.length; s++) {
                if (sections[s] != null) {
                    sections[s].closeQuietly();
                    try {
                        Files.deleteIfExists(temp(s));
                    } catch (IOException ignored) {
                        // best effort: the whole parts directory is deleted at the end
                    }
                }
            }
        }
    }

    /**
     * One section's piece: little-endian values or LSB-first bits, never both. It buffers itself
     * instead of going through a {@code BufferedOutputStream}, whose every write is synchronized: the
     * encoder writes one value per call, about a hundred million at 5 M rows.
     */
    static final class Section {
        private static final VarHandle LE_INT = MethodHandles.byteArrayViewVarHandle(int[].class,
                ByteOrder.LITTLE_ENDIAN);
        private static final VarHandle LE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class,
                ByteOrder.LITTLE_ENDIAN);

        private final OutputStream out;
        private final byte[] buf = new byte[1 << 16];
        private int pos;
        private long bytes;
        private long bits;
        private int acc;
        private int accBits;
        private boolean closed;

        Section(Path file) throws IOException {
            this.out = Files.newOutputStream(file);
        }

        /** Room for {@code n} more bytes in the buffer. */
        private void room(int n) throws IOException {
            if (pos > buf.length - n) {
                out.write(buf, 0, pos);
                pos = 0;
            }
        }

        void bit(boolean b) throws IOException {
            if (b) {
                acc |= 1 << accBits;
            }
            bits++;
            if (++accBits == 8) {
                room(1);
                buf[pos++] = (byte) acc;
                acc = 0;
                accBits = 0;
            }
        }

        void u16(short v) throws IOException {
            room(2);
            buf[pos] = (byte) v;
            buf[pos + 1] = (byte) (v >>> 8);
            pos += 2;
            bytes += 2;
        }

        void u32(int v) throws IOException {
            room(4);
            LE_INT.set(buf, pos, v);
            pos += 4;
            bytes += 4;
        }

        /**
         * {@code n} values of {@code v} from {@code from} as little-endian u32s, converted into the
         * buffer a run at a time (no per-value call).
         */
        void u32s(int[] v, int from, int n) throws IOException {
            for (int done = 0; done < n; ) {
                room(4);
                int k = Math.min(n - done, (buf.length - pos) / 4);
                for (int i = 0; i < k; i++) {
                    LE_INT.set(buf, pos + 4 * i, v[from + done + i]);
                }
                pos += 4 * k;
                done += k;
            }
            bytes += 4L * n;
        }

        void f32(float v) throws IOException {
            u32(Float.floatToRawIntBits(v));
        }

        void i64(long v) throws IOException {
            room(8);
            LE_LONG.set(buf, pos, v);
            pos += 8;
            bytes += 8;
        }

        /** Flushes a partial bitmap byte and closes; returns the length (bits if any bit was written, else bytes). */
        long finish() throws IOException {
            if (accBits > 0) {
                room(1);
                buf[pos++] = (byte) acc;
            }
            out.write(buf, 0, pos);
            pos = 0;
            out.close();
            closed = true;
            return bits > 0 ? bits : bytes;
        }

        void closeQuietly() {
            if (!closed) {
                try {
                    out.close();
                } catch (IOException ignored) {
                    // the temporary file is deleted next
                }
            }
        }
    }

    /**
     * Writes the final file on the driver, streaming the parts in order: whole parts are copied
     * channel to channel (the kernel copies, no pass through the heap), bitmaps a part at a time.
     */
    static final class Assembler implements Closeable {
        private final FileChannel channel;
        private final OutputStream out;
        private long position;
        private int acc;
        private int accBits;

        Assembler(Path target) throws IOException {
            this.channel = FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING);
            this.out = new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 20);
        }

        long position() {
            return position;
        }

        void u32(long v) throws IOException {
            for (int i = 0; i < 4; i++) {
                out.write((int) (v >>> (8 * i)));
            }
            position += 4;
        }

        void bytes(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            position += len;
        }

        void zeros(long n) throws IOException {
            byte[] z = new byte[(int) Math.min(n, 1 << 16)];
            for (long left = n; left > 0; left -= z.length) {
                int k = (int) Math.min(left, z.length);
                out.write(z, 0, k);
            }
            position += n;
        }

        /** Zero bytes up to the next multiple of 8. */
        void pad8() throws IOException {
            zeros(((position + 7) & ~7L) - position);
        }

        /** Appends a whole part file as bytes. */
        void appendBytes(Path part) throws IOException {
            out.flush(); // the channel's position is then the end of what was written
            try (FileChannel in = FileChannel.open(part, StandardOpenOption.READ)) {
                long size = in.size();
                for (long done = 0; done < size; ) {
                    long n = in.transferTo(done, size - done, channel);
                    if (n <= 0) { // the part shrank while being copied
                        throw new IOException(String.format(Locale.ROOT, "%s: %d of %d bytes copied", part, done,
                                size));
                    }
                    done += n;
                }
                position += size;
            }
        }

        /**
         * Appends the first {@code nbits} bits of a part file's bitmap (a partition's rows / 8
         * bytes, read whole): byte-aligned as they are, otherwise shifted into the pending bits.
         */
        void appendBits(Path part, long nbits) throws IOException {
            byte[] b = Files.readAllBytes(part);
            int whole = (int) (nbits >>> 3);
            int rest = (int) (nbits & 7);
            if (b.length < whole + (rest > 0 ? 1 : 0)) {
                throw new IOException(part + ": bitmap part shorter than " + nbits + " bits");
            }
            if (accBits == 0) {
                bytes(b, 0, whole);
            } else {
                byte[] shifted = new byte[whole];
                for (int i = 0; i < whole; i++) {
                    int v = acc | (b[i] & 0xff) << accBits;
                    shifted[i] = (byte) v;
                    acc = v >>> 8;
                }
                bytes(shifted, 0, whole);
            }
            if (rest > 0) {
                bits(b[whole] & ((1 << rest) - 1), rest);
            }
        }

        /** Appends single bits (LSB first). */
        void bits(int value, int count) throws IOException {
            acc |= value << accBits;
            accBits += count;
            if (accBits >= 8) {
                out.write(acc & 0xff);
                position++;
                acc >>>= 8;
                accBits -= 8;
            }
        }

        /** Ends a bitmap: writes the last partial byte (unused high bits are 0). */
        void endBits() throws IOException {
            if (accBits > 0) {
                out.write(acc & 0xff);
                position++;
            }
            acc = 0;
            accBits = 0;
        }

        /** Streams a part of u32 values to {@code sink} in order. */
        static void readU32s(Path part, U32Sink sink) throws IOException {
            try (InputStream in = new BufferedInputStream(Files.newInputStream(part), 1 << 16)) {
                byte[] b = new byte[4];
                while (in.readNBytes(b, 0, 4) == 4) {
                    sink.accept((b[0] & 0xff) | (b[1] & 0xff) << 8 | (b[2] & 0xff) << 16 | (b[3] & 0xffL) << 24);
                }
            }
        }

        @Override
        public void close() throws IOException {
            out.close(); // closes the channel
        }
    }

    @FunctionalInterface
    interface U32Sink {
        void accept(long value) throws IOException;
    }
}
