package io.github.semyonsinchenko.safetensors.crash;

import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.IndexType;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Child JVM: gathers run while another thread keeps flipping their indices between good rows and
 * bad values (off-heap segment, heap long[] and int[]; single-threaded and split over two threads). Every call must either finish or throw
 * {@link IndexOutOfBoundsException}; every row written must be a row of the table. The table is
 * the first page of a mapped file whose second page was truncated away, so a read past the table
 * faults (and would be reported, failing the run) instead of passing silently. Exits 0 when clean.
 * argv: the directory to work in, the seconds to run.
 */
public final class IndexRaceChild {
    private static final int ROW_BYTES = 32;
    private static final int PAGE = 4096;
    private static final int ROWS = PAGE / ROW_BYTES; // 128
    private static final int N_IDX = 16384; // 512 KiB of rows: the parallel calls split in two
    private static final long[] BAD = {ROWS, -1, Long.MAX_VALUE, 1L << 40, ROWS + 1000};

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]).resolve("table.bin");
        long seconds = Long.parseLong(args[1]);
        byte[] bytes = new byte[2 * PAGE];
        for (int r = 0; r < ROWS; r++) {
            for (int b = 0; b < ROW_BYTES; b += 2) {
                bytes[r * ROW_BYTES + b + 1] = (byte) r; // BF16 value r << 8 in each element: row id in every high byte
            }
        }
        Files.write(file, bytes);
        try (Arena arena = Arena.ofShared(); FileChannel ch = FileChannel.open(file, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            MemorySegment mapping = ch.map(FileChannel.MapMode.READ_WRITE, 0, 2 * PAGE, arena);
            ch.truncate(PAGE); // the second page is gone: reading it faults
            MemorySegment table = mapping.asSlice(0, PAGE);

            MemorySegment idxSeg = arena.allocate(N_IDX * 8L, 8);
            long[] idxLong = new long[N_IDX];
            int[] idxInt = new int[N_IDX];
            for (int i = 0; i < N_IDX; i++) {
                idxSeg.setAtIndex(ValueLayout.JAVA_LONG, i, i % ROWS);
                idxLong[i] = i % ROWS;
                idxInt[i] = i % ROWS;
            }
            AtomicBoolean stop = new AtomicBoolean();
            // Brief bad windows between long good ones, so that many calls pass the up-front check
            // and then meet a bad index during the copy (the window this test is about).
            Thread writer = new Thread(() -> {
                java.util.SplittableRandom rnd = new java.util.SplittableRandom(42);
                long k = 0;
                while (!stop.get()) {
                    int i = rnd.nextInt(N_IDX);
                    long v = BAD[(int) (k++ % BAD.length)];
                    set(idxSeg, idxLong, idxInt, i, v);
                    for (int spin = rnd.nextInt(100); spin > 0; spin--) {
                        Thread.onSpinWait();
                    }
                    set(idxSeg, idxLong, idxInt, i, i % ROWS);
                    for (int spin = rnd.nextInt(300); spin > 0; spin--) {
                        Thread.onSpinWait();
                    }
                }
            });
            writer.setDaemon(true);
            writer.start();
            ExecutorService pool = Executors.newSingleThreadExecutor();

            MemorySegment dst = arena.allocate((long) N_IDX * ROW_BYTES * 2, 64);
            float[] floats = new float[N_IDX * ROW_BYTES / 2];
            long ok = 0;
            long rejected = 0;
            long changedDuring = 0;
            boolean clean = true;
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            int call = 0;
            while (System.nanoTime() < end && clean) {
                dst.fill((byte) 0xEE);
                java.util.Arrays.fill(floats, -1f);
                try {
                    switch (call++ % 7) {
                        case 0 -> Kernels.gather(table, ROW_BYTES, idxSeg, IndexType.I64, dst);
                        case 1 -> Kernels.gather(table, ROW_BYTES, idxLong, 0, N_IDX, dst);
                        case 2 -> Kernels.gather(table, ROW_BYTES, idxInt, 0, N_IDX, dst);
                        case 3 -> Kernels.gatherConvert(Conversion.BF16_TO_F32, table, ROW_BYTES / 2, idxLong, 0,
                                N_IDX, floats, 0);
                        case 4 -> Kernels.gatherConvert(Conversion.BF16_TO_F32, table, ROW_BYTES / 2, idxInt, 0,
                                N_IDX, floats, 0);
                        case 5 -> Kernels.gather(table, ROW_BYTES, idxSeg, IndexType.I64, dst, pool, 2);
                        default -> Kernels.gatherConvert(Conversion.BF16_TO_F32, table, ROW_BYTES / 2,
                                MemorySegment.ofArray(idxLong), IndexType.I64, MemorySegment.ofArray(floats), pool, 2);
                    }
                    ok++;
                } catch (IndexOutOfBoundsException e) {
                    rejected++;
                    if (e.getMessage().contains("another thread changed")) {
                        changedDuring++;
                    }
                } catch (Throwable t) {
                    System.out.println("FAIL: call " + (call - 1) + " threw " + t);
                    t.printStackTrace(System.out);
                    clean = false;
                }
                clean &= rowsAreTableRows(dst, floats);
            }
            stop.set(true);
            writer.join();
            pool.shutdownNow();
            System.out.printf("%d calls finished, %d rejected a bad index (%d of them after the first check)%n",
                    ok, rejected, changedDuring);
            System.out.println((clean ? "ALL CLEAN" : "FAILED") + " on " + Kernels.description());
            System.exit(clean ? 0 : 1);
        }
    }

    private static void set(MemorySegment seg, long[] longs, int[] ints, int i, long v) {
        seg.setAtIndex(ValueLayout.JAVA_LONG, i, v);
        longs[i] = v;
        ints[i] = (int) v;
    }

    /** Every written row is one of the table's (untouched rows keep their fill). */
    private static boolean rowsAreTableRows(MemorySegment dst, float[] floats) {
        for (int i = 0; i < N_IDX; i++) {
            byte first = dst.get(ValueLayout.JAVA_BYTE, (long) i * ROW_BYTES + 1);
            if (first == (byte) 0xEE && dst.get(ValueLayout.JAVA_BYTE, (long) i * ROW_BYTES) == (byte) 0xEE) {
                continue;
            }
            for (int b = 0; b < ROW_BYTES; b++) {
                byte want = (b & 1) == 0 ? 0 : first;
                if (dst.get(ValueLayout.JAVA_BYTE, (long) i * ROW_BYTES + b) != want || (first & 0xFF) >= ROWS) {
                    System.out.println("FAIL: gathered row " + i + " is not a row of the table");
                    return false;
                }
            }
        }
        int elems = ROW_BYTES / 2;
        for (int i = 0; i < N_IDX; i++) {
            float f = floats[i * elems];
            if (f == -1f) {
                continue;
            }
            int bits = Float.floatToRawIntBits(f);
            for (int e = 0; e < elems; e++) {
                if (Float.floatToRawIntBits(floats[i * elems + e]) != bits || (bits & 0xFFFF) != 0
                        || (bits >>> 24) >= ROWS) {
                    System.out.println("FAIL: converted row " + i + " is not a row of the table");
                    return false;
                }
            }
        }
        return true;
    }
}
