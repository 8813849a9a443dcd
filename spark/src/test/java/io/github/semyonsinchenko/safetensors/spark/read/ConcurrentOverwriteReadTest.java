package io.github.semyonsinchenko.safetensors.spark.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.semyonsinchenko.safetensors.spark.write.CrashChild;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Repeated overwrites while other threads read the same path, with and without
 * {@code ignoreCorruptFiles}: every read that returns must return exactly one committed version
 * (its exact row count and values), never a mix, a partial count or loose files. A read may fail
 * when the retention deleted the version it had planned on (two commits later): that error must
 * name the missing file. Before the fix, reads returned 0, 1,250 or 1,600 rows of 3,200.
 */
class ConcurrentOverwriteReadTest extends SparkTestBase {
    static final int VERSIONS = 12;
    static final int READERS = 2;

    @TempDir
    Path tmp;

    static int rowsOf(int version) {
        return 10 + 3 * version;
    }

    @Test
    void readersSeeExactlyOneVersionWhileOverwritesCommit() throws Exception {
        for (String ignoreCorrupt : List.of("false", "true")) {
            Path root = tmp.resolve("ds-" + ignoreCorrupt);
            String r = root.toString();
            CrashChild.writeWithSpark(spark, r, "errorifexists", 0, rowsOf(0), "1", "1d");
            AtomicBoolean done = new AtomicBoolean();
            AtomicInteger reads = new AtomicInteger();
            Map<Integer, Integer> seen = new ConcurrentHashMap<>();
            List<String> errors = Collections.synchronizedList(new ArrayList<>());
            List<String> wrong = Collections.synchronizedList(new ArrayList<>());
            List<Thread> readers = new ArrayList<>();
            for (int t = 0; t < READERS; t++) {
                Thread th = new Thread(() -> {
                    while (!done.get()) {
                        try {
                            List<Row> rows = spark.read().format("safetensors").option("inferSchema", "true")
                                    .option("ignoreCorruptFiles", ignoreCorrupt).load(r).collectAsList();
                            reads.incrementAndGet();
                            Integer v = version(rows);
                            if (v == null) {
                                wrong.add(rows.size() + " rows of no single version");
                            } else {
                                seen.merge(v, 1, Integer::sum);
                            }
                        } catch (Exception e) {
                            errors.add(rootCause(e));
                        }
                    }
                }, "reader-" + t);
                th.start();
                readers.add(th);
            }
            try {
                for (int v = 1; v <= VERSIONS; v++) {
                    CrashChild.writeWithSpark(spark, r, "overwrite", v, rowsOf(v), "1", "1d");
                }
            } finally {
                done.set(true);
                for (Thread th : readers) {
                    th.join();
                }
            }
            String report = String.format(Locale.ROOT, "ignoreCorruptFiles=%s: %d reads, versions seen %s, %d errors"
                    + " %s, %d wrong", ignoreCorrupt, reads.get(), new TreeMap<>(seen), errors.size(),
                    new TreeSet<>(errors), wrong.size());
            System.out.println(report);
            Files.writeString(Path.of("target", "concurrent-reads-" + ignoreCorrupt + ".txt"), report + "\n");
            assertEquals(List.of(), wrong, report);
            assertTrue(reads.get() > 0, report);
            for (String e : errors) {
                assertTrue(e.contains("does not exist"), "only a version deleted under the read may fail: " + report);
            }
        }
    }

    /** The version every row belongs to when the rows are exactly that version, else null. */
    private static Integer version(List<Row> rows) {
        Set<String> got = new TreeSet<>();
        int v = -1;
        for (Row row : rows) {
            ByteBuffer b = ByteBuffer.wrap(row.getStruct(row.fieldIndex("vec")).getAs("data"))
                    .order(ByteOrder.LITTLE_ENDIAN);
            int rv = (int) b.getFloat();
            int id = (int) b.getFloat();
            if (v >= 0 && rv != v) {
                return null;
            }
            v = rv;
            got.add(row.getString(row.fieldIndex("tensor_key")) + "=" + rv + "," + id);
        }
        if (v < 0 || rows.size() != rowsOf(v)) {
            return null;
        }
        Set<String> want = new TreeSet<>();
        for (int i = 0; i < rowsOf(v); i++) {
            want.add("v" + v + "-" + i + "=" + v + "," + i);
        }
        return want.equals(got) ? v : null;
    }

    private static String rootCause(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("does not exist")) {
                return "does not exist: " + t.getClass().getSimpleName();
            }
            sb.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage()).append(" / ");
        }
        return sb.toString();
    }
}
