package io.github.semyonsinchenko.safetensors.crash;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException;
import io.github.semyonsinchenko.safetensors.format.Violation;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import io.github.semyonsinchenko.safetensors.io.Tensor;
import io.github.semyonsinchenko.safetensors.kernels.Conversion;
import io.github.semyonsinchenko.safetensors.kernels.IndexType;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.mmap.MappedFiles;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Child JVM: maps a file, truncates it through a second handle, then calls every read path on the
 * lost bytes. Each call must throw {@link MappedFileFaultException} naming the file and the tensor
 * (the tensor may be unknown for the table argument of a gather: then the message must still
 * name the file). Prints one line per call and exits 0 when all were clean; a crash exits
 * otherwise. argv: the directory to work in.
 */
public final class TruncatedFileChild {
    private static final int ROWS = 2048;
    private static final int ROW_ELEMS = 256; // 512-byte F16/BF16 rows: a 1 MiB table

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]).resolve("truncated.safetensors");
        short[] table = new short[ROWS * ROW_ELEMS];
        float[] floats = new float[ROWS * ROW_ELEMS];
        for (int i = 0; i < floats.length; i++) {
            floats[i] = i * 0.5f;
            table[i] = (short) i;
        }
        new SafetensorsWriter()
                .add("a_f32", Dtype.F32, new long[] {ROWS, ROW_ELEMS}, floats)
                .add("b_bf16", Dtype.BF16, new long[] {ROWS, ROW_ELEMS}, table)
                .add("c_f16", Dtype.F16, new long[] {ROWS, ROW_ELEMS}, table)
                .keepInsertionOrder(true)
                .write(file);

        Map<String, Boolean> results = new LinkedHashMap<>();
        try (SafetensorsFile st = SafetensorsFile.open(file); Arena arena = Arena.ofConfined()) {
            long keep = st.header().dataOffset() + 4096; // the first page of a_f32 survives
            try (FileChannel other = FileChannel.open(file, StandardOpenOption.WRITE)) {
                other.truncate(keep);
            }
            Tensor f32 = st.tensor("a_f32");
            Tensor bf16 = st.tensor("b_bf16");
            Tensor f16 = st.tensor("c_f16");
            long n = f32.elementCount();
            MemorySegment out = arena.allocate(n * 4, 64);
            float[] heapOut = new float[(int) n];
            long[] idx = {0, ROWS - 1, 5, ROWS / 2};
            MemorySegment idxSeg = arena.allocate(idx.length * 8L);
            MemorySegment.copy(idx, 0, idxSeg, ValueLayout.JAVA_LONG, 0, idx.length);

            // Warm up the kernels and the array copies on the surviving page so that the faults
            // below also hit JIT-compiled code (where the JDK raises its InternalError
            // asynchronously). Not the single-element getters: see Tensor's class comment.
            float sum = 0;
            Tensor head = st.tensor("a_f32");
            for (int i = 0; i < 20_000; i++) {
                Kernels.convert(Conversion.F32_TO_BF16_RNE, f32.data().asSlice(0, 4096), out, 1024);
                sum += out.get(ValueLayout.JAVA_BYTE, i & 1023);
            }
            System.out.println("warm-up done (" + sum + ", " + head.name() + ")");
            results.put("convert F32->BF16", expect(file, "a_f32", () -> Kernels.convert(Conversion.F32_TO_BF16_RNE,
                    f32.data(), out, n)));
            results.put("convert BF16->F32", expect(file, "b_bf16", () -> Kernels.convert(Conversion.BF16_TO_F32,
                    bf16.data(), out, n)));
            results.put("convert F16->F32 into a heap array", expect(file, "c_f16",
                    () -> Kernels.convert(Conversion.F16_TO_F32, f16.data(), MemorySegment.ofArray(heapOut), n)));
            results.put("gather i64", expect(file, "b_bf16", () -> Kernels.gather(bf16.data(), ROW_ELEMS * 2L,
                    idxSeg, IndexType.I64, out)));
            results.put("gatherConvert BF16 long[]", expect(file, "b_bf16", () -> Kernels.gatherConvert(
                    Conversion.BF16_TO_F32, bf16.data(), ROW_ELEMS, idx, 0, idx.length, heapOut, 0)));
            results.put("gatherConvert F16 int[]", expect(file, "c_f16", () -> Kernels.gatherConvert(
                    Conversion.F16_TO_F32, f16.data(), ROW_ELEMS, new int[] {3, ROWS - 1}, 0, 2, heapOut, 0)));
            // 1024 rows of 512 bytes: two ranges, both on lost pages, the second on the executor's thread.
            long[] manyIdx = new long[1024];
            for (int i = 0; i < manyIdx.length; i++) {
                manyIdx[i] = ROWS - 1 - i % 100;
            }
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
            results.put("parallel gather", expect(file, "b_bf16", () -> Kernels.gather(bf16.data(), ROW_ELEMS * 2L,
                    MemorySegment.ofArray(manyIdx), IndexType.I64, MemorySegment.ofArray(new byte[1024 * 512]), pool,
                    2)));
            results.put("parallel gatherConvert", expect(file, "c_f16", () -> Kernels.gatherConvert(
                    Conversion.F16_TO_F32, f16.data(), ROW_ELEMS, MemorySegment.ofArray(manyIdx), IndexType.I64,
                    MemorySegment.ofArray(new float[1024 * ROW_ELEMS]), pool, 2)));
            pool.shutdownNow();
            results.put("Tensor.getShort", expect(file, "b_bf16", () -> bf16.getShort(bf16.elementCount() - 1)));
            results.put("Tensor.getAsDouble", expect(file, "c_f16", () -> f16.getAsDouble(7)));
            results.put("Tensor.getFloat", expect(file, "a_f32", () -> f32.getFloat(n - 1)));
            results.put("Tensor.toShortArray", expect(file, "b_bf16", bf16::toShortArray));
            results.put("Tensor.toFloatArray", expect(file, "a_f32", f32::toFloatArray));
            // The surviving page still reads.
            results.put("live page reads", f32.getFloat(3) == 1.5f);
        }
        // A whole file mapped through MappedFile (the sampler's database files): a gather from its
        // lost pages names that file (no tensor there).
        Path plain = Path.of(args[0]).resolve("table.bin");
        java.nio.file.Files.write(plain, new byte[ROWS * ROW_ELEMS * 2]);
        try (MappedFile mapped = MappedFile.open(plain); Arena arena = Arena.ofConfined()) {
            try (FileChannel other = FileChannel.open(plain, StandardOpenOption.WRITE)) {
                other.truncate(4096);
            }
            MemorySegment out = arena.allocate(2L * ROW_ELEMS * 2, 64);
            results.put("gather from a MappedFile", expect(plain, null, () -> Kernels.gather(mapped.segment(),
                    ROW_ELEMS * 2L, new long[] {ROWS - 1, 1}, 0, 2, out)));
            // The guarded copy out of a mapping (how bytes leave for another runtime's buffers).
            results.put("MappedFiles.copy from a MappedFile", expect(plain, null, () -> MappedFiles.copy(
                    mapped.segment(), 0, MemorySegment.ofArray(new byte[(int) mapped.size()]), 0, mapped.size())));
            results.put("MappedFile.currentSize sees the truncation", mapped.currentSize() == 4096);
        }
        // Cut inside a page: the rest of that page reads back as zeros, no fault; the copy still says so.
        Path cut = Path.of(args[0]).resolve("cut.bin");
        java.nio.file.Files.write(cut, new byte[10_000]);
        try (MappedFile mapped = MappedFile.open(cut)) {
            try (FileChannel other = FileChannel.open(cut, StandardOpenOption.WRITE)) {
                other.truncate(9_000);
            }
            results.put("MappedFiles.copy of a file cut inside a page", expect(cut, null, () -> MappedFiles.copy(
                    mapped.segment(), 0, MemorySegment.ofArray(new byte[10_000]), 0, 10_000)));
        }
        boolean ok = !results.containsValue(false);
        System.out.println((ok ? "ALL CLEAN" : "FAILED") + " on " + Kernels.description());
        System.exit(ok ? 0 : 1);
    }

    private static boolean expect(Path file, String tensor, Runnable call) {
        try {
            call.run();
            System.out.println("NO EXCEPTION");
            return false;
        } catch (MappedFileFaultException e) {
            System.out.println("caught: " + e.getMessage());
            return e.violation() == Violation.FILE_CHANGED_WHILE_MAPPED && file.toString().equals(e.source())
                    && Objects.equals(tensor, e.tensor());
        } catch (Throwable t) {
            System.out.println("WRONG EXCEPTION: " + t);
            t.printStackTrace(System.out);
            return false;
        }
    }
}
