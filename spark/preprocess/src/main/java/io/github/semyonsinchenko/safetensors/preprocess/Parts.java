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
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
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

    /** One section's piece: little-endian values or LSB-first bits, never both. */
    static final class Section {
        private final OutputStream out;
        private static final int BLOCK_BYTES = 1 << 16;
        private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class,
                ByteOrder.LITTLE_ENDIAN);
        private final byte[] buf = new byte[8];
        private byte[] block;
        private long bytes;
        private long bits;
        private int acc;
        private int accBits;
        private boolean closed;

        Section(Path file) throws IOException {
            this.out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16);
        }

        void bit(boolean b) throws IOException {
            if (b) {
                acc |= 1 << accBits;
            }
            bits++;
            if (++accBits == 8) {
                out.write(acc);
                acc = 0;
                accBits = 0;
            }
        }

        void u16(short v) throws IOException {
            out.write(v & 0xff);
            out.write((v >>> 8) & 0xff);
            bytes += 2;
        }

        void u32(int v) throws IOException {
            buf[0] = (byte) v;
            buf[1] = (byte) (v >>> 8);
            buf[2] = (byte) (v >>> 16);
            buf[3] = (byte) (v >>> 24);
            out.write(buf, 0, 4);
            bytes += 4;
        }

        /**
         * {@code n} values of {@code v} from {@code from} as little-endian u32s, converted a block at a
         * time: one stream write per block instead of one per value.
         */
        void u32s(int[] v, int from, int n) throws IOException {
            if (block == null) {
                block = new byte[BLOCK_BYTES];
            }
            for (int done = 0; done < n; ) {
                int k = Math.min(n - done, BLOCK_BYTES / 4);
                for (int i = 0; i < k; i++) {
                    INT_LE.set(block, 4 * i, v[from + done + i]);
                }
                out.write(block, 0, 4 * k);
                done += k;
            }
            bytes += 4L * n;
        }

        void f32(float v) throws IOException {
            u32(Float.floatToRawIntBits(v));
        }

        void i64(long v) throws IOException {
            for (int i = 0; i < 8; i++) {
                buf[i] = (byte) (v >>> (8 * i));
            }
            out.write(buf, 0, 8);
            bytes += 8;
        }

        /** Flushes a partial bitmap byte and closes; returns the length (bits if any bit was written, else bytes). */
        long finish() throws IOException {
            if (accBits > 0) {
                out.write(acc);
            }
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

    /** Writes the final file on the driver, streaming the parts in order. */
    static final class Assembler implements Closeable {
        private final OutputStream out;
        private long position;
        private int acc;
        private int accBits;

        Assembler(Path target) throws IOException {
            this.out = new BufferedOutputStream(Files.newOutputStream(target), 1 << 20);
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
            position += Files.copy(part, out);
        }

        /** Appends the first {@code nbits} bits of a part file's bitmap. */
        void appendBits(Path part, long nbits) throws IOException {
            try (InputStream in = new BufferedInputStream(Files.newInputStream(part), 1 << 16)) {
                for (long left = nbits; left > 0; left -= 8) {
                    int b = in.read();
                    if (b < 0) {
                        throw new IOException(part + ": bitmap part shorter than " + nbits + " bits");
                    }
                    int k = (int) Math.min(8, left);
                    bits(b & ((1 << k) - 1), k);
                }
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
            out.close();
        }
    }

    @FunctionalInterface
    interface U32Sink {
        void accept(long value) throws IOException;
    }
}
