package io.github.semyonsinchenko.safetensors.sampler.db;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Sequential little-endian writes to a new file through one buffer; tracks the position for padding. */
final class LittleEndianFile implements AutoCloseable {
    private final FileChannel channel;
    private final ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    private long position;

    LittleEndianFile(Path path) throws IOException {
        channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    }

    private void room(int n) throws IOException {
        if (buf.remaining() < n) {
            flush();
        }
    }

    private void flush() throws IOException {
        buf.flip();
        while (buf.hasRemaining()) {
            channel.write(buf);
        }
        buf.clear();
    }

    void u8(int v) throws IOException {
        room(1);
        buf.put((byte) v);
        position++;
    }

    void u16(short v) throws IOException {
        room(2);
        buf.putShort(v);
        position += 2;
    }

    void u32(int v) throws IOException {
        room(4);
        buf.putInt(v);
        position += 4;
    }

    void i64(long v) throws IOException {
        room(8);
        buf.putLong(v);
        position += 8;
    }

    void f32(float v) throws IOException {
        room(4);
        buf.putFloat(v);
        position += 4;
    }

    void bytes(byte[] b) throws IOException {
        for (int off = 0; off < b.length; ) {
            room(1);
            int n = Math.min(buf.remaining(), b.length - off);
            buf.put(b, off, n);
            off += n;
        }
        position += b.length;
    }

    /** An LSB-first bitmap of {@code bits[0, n)}, padded to a multiple of 8 bytes. */
    void bitmap(boolean[] bits, int n) throws IOException {
        long bytes = DatabaseLayout.bitmapBytes(n);
        for (long i = 0; i < bytes; i++) {
            int v = 0;
            for (int b = 0; b < 8; b++) {
                long k = i * 8 + b;
                if (k < n && bits[(int) k]) {
                    v |= 1 << b;
                }
            }
            u8(v);
        }
        pad8();
    }

    void pad8() throws IOException {
        while ((position & 7) != 0) {
            u8(0);
        }
    }

    long position() {
        return position;
    }

    @Override
    public void close() throws IOException {
        try {
            flush();
            channel.force(false);
        } finally {
            channel.close();
        }
    }
}
