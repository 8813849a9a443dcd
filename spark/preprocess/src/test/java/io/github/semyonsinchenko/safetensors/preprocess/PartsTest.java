package io.github.semyonsinchenko.safetensors.preprocess;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
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
    void u32sWritesTheSameBytesAsOneU32PerValue() throws IOException {
        Random rnd = new Random(11);
        int[] values = new int[40_000]; // more than one conversion block
        for (int i = 0; i < values.length; i++) {
            values[i] = rnd.nextInt();
        }
        Parts.Info info;
        try (Parts.Out out = new Parts.Out(dir.toString(), 0, 2)) {
            out.section(0).u32(values[0]);
            out.section(0).u32s(values, 1, values.length - 2);
            out.section(0).u32s(values, values.length - 1, 0);
            out.section(0).u32(values[values.length - 1]);
            for (int v : values) {
                out.section(1).u32(v);
            }
            info = out.commit(values.length);
        }
        assertEquals(4L * values.length, info.lengths()[0]);
        assertArrayEquals(Files.readAllBytes(Parts.partFile(dir, 1, 0)), Files.readAllBytes(Parts.partFile(dir, 0, 0)));
    }
}
