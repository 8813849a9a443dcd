package io.github.semyonsinchenko.safetensors.spark.read;

import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The remote read path fetches the selected tensors of a file in few coalesced ranged reads
 * ({@code coalesce_gap_bytes}, {@code max_read_bytes}): requests and bytes counted by
 * {@link CountingFileSystem} (each ranged read is one positioned {@code readFully} there) beyond
 * what the same query reads without tensor bytes (headers: schema inference and the partition
 * reader), values compared with the memory-mapped local read.
 */
class CoalescedReadTest extends SparkTestBase {
    static final int N = 40;
    static final int TENSOR_BYTES = 1000;

    @TempDir
    static Path tmp;
    static Path many;
    static Path gapped;

    @BeforeAll
    static void data() throws Exception {
        many = Files.createDirectories(tmp.resolve("many"));
        SafetensorsWriter w = new SafetensorsWriter().keepInsertionOrder(true);
        for (int i = 0; i < N; i++) {
            w.add(name(i), Dtype.U8, new long[] {TENSOR_BYTES}, values(i, TENSOR_BYTES));
        }
        w.write(many.resolve("m.safetensors"));
        gapped = Files.createDirectories(tmp.resolve("gapped"));
        new SafetensorsWriter().keepInsertionOrder(true)
                .add("a", Dtype.U8, new long[] {TENSOR_BYTES}, values(1, TENSOR_BYTES))
                .add("big", Dtype.U8, new long[] {3 << 20}, values(2, 3 << 20))
                .add("b", Dtype.U8, new long[] {TENSOR_BYTES}, values(3, TENSOR_BYTES))
                .write(gapped.resolve("g.safetensors"));
    }

    static String name(int i) {
        return String.format(Locale.ROOT, "t%02d", i);
    }

    static byte[] values(int seed, int n) {
        byte[] b = new byte[n];
        for (int j = 0; j < n; j++) {
            b[j] = (byte) (seed * 31 + j * 7);
        }
        return b;
    }

    @BeforeEach
    void resetCounters() {
        CountingFileSystem.reset();
    }

    static DataFrameReader reader() {
        return spark.read().format("safetensors").option("inferSchema", "true");
    }

    static Header header(Path dir) throws Exception {
        try (var files = Files.list(dir)) {
            Path f = files.filter(p -> p.toString().endsWith(".safetensors")).findFirst().orElseThrow();
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
                return Header.read(ch, f.toString());
            }
        }
    }

    /** Requests and bytes of tensor files so far, less those of the query's header reads. */
    static long[] dataReads(long[] headerOnly) {
        return new long[] {CountingFileSystem.TENSOR_FILE_REQUESTS.get() - headerOnly[0],
                CountingFileSystem.TENSOR_FILE_BYTES.get() - headerOnly[1]};
    }

    /** What reading only the shape of column {@code column} of {@code dir} reads: headers only. */
    static long[] headerOnly(DataFrameReader r, Path dir, String column) {
        CountingFileSystem.reset();
        r.load(CountingFileSystem.uri(dir)).select(col(column + ".shape")).collectAsList();
        long[] out = {CountingFileSystem.TENSOR_FILE_REQUESTS.get(), CountingFileSystem.TENSOR_FILE_BYTES.get()};
        assertTrue(out[0] > 0 && out[1] > 0);
        CountingFileSystem.reset();
        return out;
    }

    /**
     * Reads the data of tensors {@code indexes} of the many-tensor file remotely, checks every value
     * and returns the requests and bytes of the tensor data.
     */
    static long[] readData(DataFrameReader r, List<Integer> indexes) {
        long[] headers = headerOnly(r, many, name(0));
        Column[] cols = indexes.stream().map(i -> col(name(i) + ".data")).toArray(Column[]::new);
        List<Row> rows = r.load(CountingFileSystem.uri(many)).select(cols).collectAsList();
        assertEquals(1, rows.size());
        for (int k = 0; k < indexes.size(); k++) {
            assertArrayEquals(values(indexes.get(k), TENSOR_BYTES), (byte[]) rows.getFirst().get(k), name(indexes.get(k)));
        }
        return dataReads(headers);
    }

    /** Schema inference and the read both open tensor files with the listed length: no HEAD per file on S3A. */
    @Test
    void aQueryOpensNoTensorFileWithoutItsListedLength() throws Exception {
        List<Row> rows = reader().load(CountingFileSystem.uri(many)).select(col(name(3) + ".data")).collectAsList();
        assertArrayEquals(values(3, TENSOR_BYTES), (byte[]) rows.getFirst().get(0));
        assertTrue(CountingFileSystem.tensorFileOpens() >= 2, "schema inference and the read open the file");
        assertEquals(0, CountingFileSystem.TENSOR_FILE_BLIND_OPENS.get(),
                "opens without the listed length (a HEAD each on S3A)");
    }

    @Test
    void theSelectedTensorsOfAFileComeInOneReadInsteadOfOnePerTensor() throws Exception {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            all.add(i);
        }
        assertArrayEquals(new long[] {1, (long) N * TENSOR_BYTES}, readData(reader(), all));
        // coalescing off: the old path, one request per tensor
        assertArrayEquals(new long[] {N, (long) N * TENSOR_BYTES},
                readData(reader().option("max_read_bytes", "0"), all));
        // 10 tensors per read
        assertArrayEquals(new long[] {4, (long) N * TENSOR_BYTES},
                readData(reader().option("max_read_bytes", "10000"), all));
    }

    @Test
    void onlyTheSelectedTensorsAreFetchedAndAGapOverTheThresholdSplits() throws Exception {
        List<Integer> even = new ArrayList<>();
        for (int i = 0; i < N; i += 2) {
            even.add(i);
        }
        Header h = header(many);
        // gaps of one tensor (1000 bytes) over a threshold of 999: one read per selected tensor, nothing else read
        assertArrayEquals(new long[] {N / 2, (long) N / 2 * TENSOR_BYTES},
                readData(reader().option("coalesce_gap_bytes", "999"), even));

        // within the default threshold (1 MiB): one read spanning the unselected tensors between
        TensorInfo first = h.tensor(name(0));
        TensorInfo last = h.tensor(name(N - 2));
        assertArrayEquals(new long[] {1, last.end() - first.begin()}, readData(reader(), even));
    }

    @Test
    void aGapLargerThanTheDefaultThresholdSplitsTheRead() throws Exception {
        long[] headers = headerOnly(reader(), gapped, "a");
        List<Row> rows = reader().load(CountingFileSystem.uri(gapped)).select(col("a.data"), col("b.data"))
                .collectAsList();
        assertArrayEquals(values(1, TENSOR_BYTES), (byte[]) rows.getFirst().get(0));
        assertArrayEquals(values(3, TENSOR_BYTES), (byte[]) rows.getFirst().get(1));
        // the 3 MiB tensor between them is over the default 1 MiB: two reads, none of its bytes
        assertArrayEquals(new long[] {2, 2L * TENSOR_BYTES}, dataReads(headers));

        CountingFileSystem.reset();
        rows = reader().option("coalesce_gap_bytes", Integer.toString(4 << 20)).load(CountingFileSystem.uri(gapped))
                .select(col("a.data"), col("b.data")).collectAsList();
        assertArrayEquals(values(3, TENSOR_BYTES), (byte[]) rows.getFirst().get(1));
        assertArrayEquals(new long[] {1, 2L * TENSOR_BYTES + (3 << 20)}, dataReads(headers));
    }

    @Test
    void everyLayoutReadsTheSameCoalescedAsMappedAndPerTensor() throws Exception {
        Path plain = TestData.plain(tmp.resolve("plain"));
        Path batch = TestData.batch(tmp.resolve("batch"));
        Path kv = TestData.kv(tmp.resolve("kv"));
        for (Path p : List.of(plain, batch, kv, many, gapped)) {
            for (boolean unbatch : p == batch ? new boolean[] {false, true} : new boolean[] {false}) {
                String u = Boolean.toString(unbatch);
                List<String> local = canonical(reader().option("unbatch", u).load(p.toString()));
                assertEquals(local, canonical(reader().option("unbatch", u).load(CountingFileSystem.uri(p))),
                        p + " unbatch " + u);
                assertEquals(local, canonical(reader().option("unbatch", u).option("max_read_bytes", "0")
                        .load(CountingFileSystem.uri(p))), p + " per tensor, unbatch " + u);
                assertEquals(local, canonical(reader().option("unbatch", u).option("max_read_bytes", "9")
                        .option("coalesce_gap_bytes", "0").load(CountingFileSystem.uri(p))), p + " tiny reads, unbatch " + u);
            }
        }
        // unbatched samples of the batch dataset: slices of each file's image tensors, one read per file
        DataFrameReader unbatched = reader().option("unbatch", "true");
        long[] headers = headerOnly(unbatched, batch, "image");
        assertEquals(7, unbatched.load(CountingFileSystem.uri(batch)).select(col("image.data")).collectAsList().size());
        long files;
        try (var s = Files.list(batch)) {
            files = s.filter(f -> f.toString().endsWith(".safetensors")).count();
        }
        assertEquals(files, dataReads(headers)[0]);
    }

    @Test
    void badOrMisspeltReadOptionsAreRejected() {
        // An AnalysisException while the query is planned, like the write's options: no task runs.
        AnalysisException e = assertThrows(AnalysisException.class,
                () -> reader().option("coalesce_gap_bytes", "-1").load(many.toString()).collect());
        assertTrue(e.getMessage().contains("safetensors read option 'coalesce_gap_bytes' is '-1'; allowed: a whole"
                + " number of bytes from 0 to "), e.getMessage());
        e = assertThrows(AnalysisException.class, () -> reader().option("max_read_byte", "5").load(many.toString())
                .collect());
        assertTrue(e.getMessage().contains("did you mean 'max_read_bytes'"), e.getMessage());
        e = assertThrows(AnalysisException.class, () -> reader().option("useIndex", "yes").load(many.toString())
                .collect());
        assertTrue(e.getMessage().contains("'useIndex' is 'yes'; allowed: true (default), false"), e.getMessage());
        e = assertThrows(AnalysisException.class, () -> reader().option("layout", "tall").load(many.toString())
                .collect());
        assertTrue(e.getMessage().contains("allowed: auto (default), wide, kv, key_value, keyvalue"), e.getMessage());
    }
}
