package io.github.semyonsinchenko.safetensors.preprocess;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

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

class PartsTest {

    @TempDir
    Path dir;

    @Test
    void bitmapsOfPartsOfAnySizeJoinIntoOneLsbFirstBitmap() throws IOException {
        Random rnd = new Random(7);
        int[] sizes = {0, 1, 7, 8, 9, 13, 0, 64, 3, 100};
        List<Boolean> all = new ArrayList<>();
        List<Parts.Info> infos = new ArrayList<>();
        for (int p = 0; p < sizes.length; p++) {
            try (Parts.Out out = new Parts.Out(dir.toString(), p, 2)) {
                for (int i = 0; i < sizes[p]; i++) {
                    boolean b = rnd.nextBoolean();
                    all.add(b);
                    out.section(0).bit(b);
                    out.section(1).u32(all.size());
                }
                infos.add(out.commit(sizes[p]));
            }
        }
        Path file = dir.resolve("joined");
        try (Parts.Assembler a = new Parts.Assembler(file)) {
            a.u32(0xdeadbeefL);
            for (Parts.Info info : infos) {
                a.appendBits(Parts.partFile(dir, 0, info.partition()), info.rows());
            }
            a.endBits();
            a.pad8();
            for (Parts.Info info : infos) {
                a.appendBytes(Parts.partFile(dir, 1, info.partition()));
            }
        }
        int bitmapEnd = (4 + (all.size() + 7) / 8 + 7) & ~7;
        byte[] want = new byte[bitmapEnd + 4 * all.size()];
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
        try (var files = Files.list(dir)) {
            assertEquals(0, files.filter(f -> f.toString().endsWith(".tmp")).count(), "no temporary parts left");
        }
    }

    @Test
    void valuesOfEveryWidthAreLittleEndianAcrossManyBufferFills() throws IOException {
        // More than one buffer's worth (64 KiB) of each, in odd sizes so values straddle refills.
        Random rnd = new Random(11);
        int n = 50_001;
        short[] u16 = new short[n];
        int[] u32 = new int[n];
        float[] f32 = new float[n];
        long[] i64 = new long[n];
        boolean[] bits = new boolean[3 * n];
        Parts.Info info;
        try (Parts.Out out = new Parts.Out(dir.toString(), 0, 2)) {
            for (int i = 0; i < n; i++) {
                u16[i] = (short) rnd.nextInt();
                u32[i] = rnd.nextInt();
                f32[i] = rnd.nextFloat() - 0.5f;
                i64[i] = rnd.nextLong();
                out.section(0).u16(u16[i]);
                out.section(0).u32(u32[i]);
                out.section(0).f32(f32[i]);
                out.section(0).i64(i64[i]);
            }
            for (int i = 0; i < bits.length; i++) {
                bits[i] = rnd.nextInt(3) == 0;
                out.section(1).bit(bits[i]);
            }
            info = out.commit(n);
        }
        assertEquals(18L * n, info.lengths()[0], "bytes of section 0");
        assertEquals(bits.length, info.lengths()[1], "bits of section 1");
        ByteBuffer values = ByteBuffer.wrap(Files.readAllBytes(Parts.partFile(dir, 0, 0))).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(18 * n, values.remaining());
        for (int i = 0; i < n; i++) {
            assertEquals(u16[i], values.getShort(), "u16 " + i);
            assertEquals(u32[i], values.getInt(), "u32 " + i);
            assertEquals(Float.floatToRawIntBits(f32[i]), values.getInt(), "f32 " + i);
            assertEquals(i64[i], values.getLong(), "i64 " + i);
        }
        byte[] bitmap = Files.readAllBytes(Parts.partFile(dir, 1, 0));
        assertEquals((bits.length + 7) / 8, bitmap.length);
        for (int i = 0; i < bits.length; i++) {
            assertEquals(bits[i], (bitmap[i / 8] >>> (i % 8) & 1) == 1, "bit " + i);
        }
    }

    @Test
    void u32sWritesTheSameBytesAsOneU32PerValue() throws IOException {
        Random rnd = new Random(11);
        int[] values = new int[40_000]; // more than one conversion block
        for (int i = 0; i < values.length; i++) {
            values[i] = rnd.nextInt();
        }
        Parts.Info info;
        try (Parts.Out out = new Parts.Out(dir.toString(), 0, 2)) {
            out.section(0).u16((short) 7); // the runs start off a 4-byte boundary of the buffer
            out.section(1).u16((short) 7);
            out.section(0).u32(values[0]);
            out.section(0).u32s(values, 1, values.length - 2);
            out.section(0).u32s(values, values.length - 1, 0);
            out.section(0).u32(values[values.length - 1]);
            for (int v : values) {
                out.section(1).u32(v);
            }
            info = out.commit(values.length);
        }
        assertEquals(4L * values.length + 2, info.lengths()[0]);
        assertArrayEquals(Files.readAllBytes(Parts.partFile(dir, 1, 0)), Files.readAllBytes(Parts.partFile(dir, 0, 0)));
    }
}
