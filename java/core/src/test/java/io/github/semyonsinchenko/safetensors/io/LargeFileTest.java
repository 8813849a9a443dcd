package io.github.semyonsinchenko.safetensors.io;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Files past 2 GiB and 4 GiB map and slice correctly (a sparse file: no disk is used for the zeros). */
class LargeFileTest {
    @TempDir
    Path dir;

    @Test
    void sparseFileOver4GiBOpensAndReadsAtHighOffsets() throws IOException {
        long big = (4L << 30) + (512L << 20) + 3; // 4.5 GiB + 3 bytes of U8
        Header header = Header.layout(java.util.Map.of("note", "sparse"),
                List.of(new Header.Entry("big", Dtype.U8, new long[] {big}),
                        new Header.Entry("tail", Dtype.I64, new long[] {2})),
                true, "sparse");
        byte[] head = header.toBytes();
        Path p = dir.resolve("sparse.safetensors");
        long tailAt = header.dataOffset() + big;
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
            f.setLength(header.fileSize());
            f.write(head);
            // Markers past 2^31 and 2^32 inside "big", and the tail tensor after it.
            writeAt(f, header.dataOffset() + (3L << 30), (byte) 0x5A);
            writeAt(f, header.dataOffset() + big - 1, (byte) 0x7E);
            ByteBuffer tail = ByteBuffer.allocate(16).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            tail.putLong(-7).putLong(Long.MAX_VALUE).flip();
            f.getChannel().write(tail, tailAt);
        }
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            Tensor t = f.tensor("big");
            assertEquals(big, t.byteSize());
            assertEquals(0x5A, t.data().get(ValueLayout.JAVA_BYTE, 3L << 30));
            assertEquals(0x7E, t.data().get(ValueLayout.JAVA_BYTE, big - 1));
            assertEquals(0, t.getByte(1L << 32));
            assertEquals(-7, f.tensor("tail").getLong(0));
            assertEquals(Long.MAX_VALUE, f.tensor("tail").getLong(1));
            assertEquals("sparse", f.metadata().get("note"));
        }
    }

    private static void writeAt(RandomAccessFile f, long pos, byte b) throws IOException {
        f.seek(pos);
        f.write(b);
    }
}
