package io.github.semyonsinchenko.safetensors.sampler.db;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The appenders of the format: values, bits, padding, and pieces joined into one file. */
class SectionWriterTest {

    @TempDir
    Path dir;

    @Test
    void bitmapsOfPiecesOfAnySizeJoinIntoOneLsbFirstBitmap() throws IOException {
        Random rnd = new Random(7);
        int[] sizes = {0, 1, 7, 8, 9, 13, 0, 64, 3, 100};
        List<Boolean> all = new ArrayList<>();
        List<Path> bitPieces = new ArrayList<>();
        List<Path> valuePieces = new ArrayList<>();
        long[] rows = new long[sizes.length];
        for (int p = 0; p < sizes.length; p++) {
            Path bits = dir.resolve("bits-" + p);
            Path values = dir.resolve("values-" + p);
            try (SectionWriter b = SectionWriter.create(bits); SectionWriter v = SectionWriter.create(values)) {
                for (int i = 0; i < sizes[p]; i++) {
                    boolean x = rnd.nextBoolean();
                    all.add(x);
                    b.bit(x);
                    v.u32(all.size());
                }
                b.finish();
                v.finish();
            }
            bitPieces.add(bits);
            valuePieces.add(values);
            rows[p] = sizes[p];
        }
        Path file = dir.resolve("joined");
        try (SectionWriter w = SectionWriter.create(file)) {
            w.u32(0xdeadbeef);
            w.appendSection(DatabaseLayout.Section.BITMAP, bitPieces, rows);
            w.appendSection(DatabaseLayout.Section.VALUES_4, valuePieces, rows);
            assertEquals(all.size(), w.bitCount());
            w.finish();
        }
        int bitmapEnd = (4 + (all.size() + 7) / 8 + 7) & ~7;
        byte[] want = new byte[(int) DatabaseLayout.pad8(bitmapEnd + 4L * all.size())];
        want[0] = (byte) 0xef;
        want[1] = (byte) 0xbe;
        want[2] = (byte) 0xad;
        want[3] = (byte) 0xde;
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i)) {
                want[4 + i / 8] |= (byte) (1 << (i % 8));
            }
            int v = i + 1;
            for (int k = 0; k < 4; k++) {
                want[bitmapEnd + 4 * i + k] = (byte) (v >>> (8 * k));
            }
        }
        assertArrayEquals(want, Files.readAllBytes(file));
    }

    @Test
    void valuesOfEveryWidthAreLittleEndianAcrossManyBufferFillsAndReadBack() throws IOException {
        // More than one buffer's worth (64 KiB) of each, in odd sizes so values straddle refills.
        Random rnd = new Random(11);
        int n = 50_001;
        short[] u16 = new short[n];
        int[] u32 = new int[n];
        float[] f32 = new float[n];
        long[] i64 = new long[n];
        boolean[] bits = new boolean[3 * n];
        Path values = dir.resolve("values");
        Path bitmap = dir.resolve("bitmap");
        try (SectionWriter v = SectionWriter.create(values); SectionWriter b = SectionWriter.create(bitmap)) {
            for (int i = 0; i < n; i++) {
                u16[i] = (short) rnd.nextInt();
                u32[i] = rnd.nextInt();
                f32[i] = rnd.nextFloat() - 0.5f;
                i64[i] = rnd.nextLong();
                v.u16s(u16, i, 1);
                v.u32(u32[i]);
                v.f32(f32[i]);
                v.i64(i64[i]);
            }
            for (int i = 0; i < bits.length; i++) {
                bits[i] = rnd.nextInt(3) == 0;
                b.bit(bits[i]);
            }
            assertEquals(18L * n, v.position());
            assertEquals(bits.length, b.bitCount());
            v.finish();
            b.finish();
        }
        ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(values)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(18 * n, in.remaining());
        for (int i = 0; i < n; i++) {
            assertEquals(u16[i], in.getShort(), "u16 " + i);
            assertEquals(u32[i], in.getInt(), "u32 " + i);
            assertEquals(Float.floatToRawIntBits(f32[i]), in.getInt(), "f32 " + i);
            assertEquals(i64[i], in.getLong(), "i64 " + i);
        }
        assertEquals((bits.length + 7) / 8, Files.size(bitmap));
        try (SectionReader r = new SectionReader(bitmap)) {
            for (int i = 0; i < bits.length; i++) {
                assertEquals(bits[i], r.bit(), "bit " + i);
            }
        }
    }

    @Test
    void bulkWritesGiveTheSameBytesAsOneValueACall() throws IOException {
        Random rnd = new Random(11);
        int[] ints = rnd.ints(40_000).toArray(); // more than one buffer
        short[] shorts = new short[70_001];
        for (int i = 0; i < shorts.length; i++) {
            shorts[i] = (short) rnd.nextInt();
        }
        Path bulk = dir.resolve("bulk");
        Path single = dir.resolve("single");
        try (SectionWriter a = SectionWriter.create(bulk); SectionWriter b = SectionWriter.create(single)) {
            a.u8(7); // the runs start off a 4-byte boundary of the buffer
            b.u8(7);
            a.u32(ints[0]);
            a.u32s(ints, 1, ints.length - 2);
            a.u32s(ints, ints.length - 1, 0);
            a.u32(ints[ints.length - 1]);
            a.u16s(shorts, 0, shorts.length);
            for (int v : ints) {
                b.u32(v);
            }
            for (int i = 0; i < shorts.length; i++) {
                b.u16s(shorts, i, 1);
            }
            a.finish();
            b.finish();
        }
        assertEquals(1 + 4L * ints.length + 2L * shorts.length, Files.size(bulk));
        assertArrayEquals(Files.readAllBytes(single), Files.readAllBytes(bulk));
    }

    @Test
    void sectionsEndOnMultiplesOfEightAndPiecesReadBack() throws IOException {
        Path piece = dir.resolve("piece");
        try (SectionWriter w = SectionWriter.create(piece)) {
            w.i64(-3);
            w.i64(Long.MAX_VALUE);
            w.finish();
        }
        try (SectionReader r = new SectionReader(piece)) {
            assertEquals(-3, r.i64());
            assertEquals(Long.MAX_VALUE, r.i64());
            assertThrows(EOFException.class, r::i64);
        }
        Path u32s = dir.resolve("u32s");
        try (SectionWriter w = SectionWriter.create(u32s)) {
            w.u32s(new int[] {1, -1, 7}, 0, 3);
            w.finish();
        }
        assertArrayEquals(new int[] {1, -1, 7}, SectionReader.u32s(u32s));
        Path file = dir.resolve("file");
        try (SectionWriter w = SectionWriter.create(file)) {
            w.bits(0b101, 3);
            w.endSection();
            assertEquals(8, w.position());
            w.u8(1);
            w.endSection();
            assertEquals(16, w.position());
            w.endSection(); // already aligned: nothing more
            assertEquals(16, w.position());
            w.finish();
        }
        assertArrayEquals(new byte[] {5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, Files.readAllBytes(file));
    }

    @Test
    void aValueInsideAnUnfinishedBitmapByteOrAWrongSizeFails() throws IOException {
        try (SectionWriter w = SectionWriter.create(dir.resolve("mixed"))) {
            w.bit(true);
            assertThrows(IllegalStateException.class, () -> w.u32(1));
        }
        try (SectionWriter w = SectionWriter.create(dir.resolve("sized"), 16)) {
            w.u32(1);
            IllegalStateException e = assertThrows(IllegalStateException.class, w::finish);
            assertEquals(dir.resolve("sized") + ": wrote 4 bytes, the layout needs 16", e.getMessage());
        }
        assertThrows(IOException.class, () -> SectionWriter.create(dir.resolve("sized")), "the file must be new");
    }
}
