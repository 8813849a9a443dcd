package io.github.semyonsinchenko.safetensors.spark.read;

import java.io.IOException;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * The local file system under the scheme {@code countfs}, so the connector treats it as remote
 * (positioned range reads, no mmap), and counting which files are opened, how many bytes are read
 * from {@code .safetensors} files and in how many positioned requests ({@code readFully} calls,
 * which is what each ranged read of the connector becomes on this file system), and how many
 * {@code .safetensors} opens came without the listed length or status: on S3A each of those costs a
 * HEAD request.
 */
public class CountingFileSystem extends RawLocalFileSystem {
    public static final String SCHEME = "countfs";
    static final Map<String, AtomicLong> OPENS = new ConcurrentHashMap<>();
    static final AtomicLong TENSOR_FILE_BYTES = new AtomicLong();
    static final AtomicLong TENSOR_FILE_REQUESTS = new AtomicLong();
    static final AtomicLong TENSOR_FILE_BLIND_OPENS = new AtomicLong();
    private static final ThreadLocal<Boolean> KNOWN_LENGTH = ThreadLocal.withInitial(() -> false);

    static void reset() {
        OPENS.clear();
        TENSOR_FILE_BYTES.set(0);
        TENSOR_FILE_REQUESTS.set(0);
        TENSOR_FILE_BLIND_OPENS.set(0);
    }

    /** Opens of files whose name ends with .safetensors. */
    static long tensorFileOpens() {
        return OPENS.entrySet().stream().filter(e -> e.getKey().endsWith(".safetensors"))
                .mapToLong(e -> e.getValue().get()).sum();
    }

    static String uri(java.nio.file.Path local) {
        return SCHEME + "://" + local.toAbsolutePath();
    }

    @Override
    public URI getUri() {
        return URI.create(SCHEME + ":///");
    }

    @Override
    public String getScheme() {
        return SCHEME;
    }

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        FSDataInputStream in = super.open(f, bufferSize);
        OPENS.computeIfAbsent(f.getName(), k -> new AtomicLong()).incrementAndGet();
        boolean tensors = f.getName().endsWith(".safetensors");
        if (tensors && !KNOWN_LENGTH.get()) {
            TENSOR_FILE_BLIND_OPENS.incrementAndGet();
        }
        return new FSDataInputStream(new Counting(in, tensors));
    }

    /** The builder's open ({@code openFile}); it knows the length when given the status or the length option. */
    @Override
    protected java.util.concurrent.CompletableFuture<FSDataInputStream> openFileWithOptions(Path path,
            org.apache.hadoop.fs.impl.OpenFileParameters parameters) throws IOException {
        boolean known = parameters.getStatus() != null
                || parameters.getOptions().get("fs.option.openfile.length") != null;
        KNOWN_LENGTH.set(known);
        try {
            return super.openFileWithOptions(path, parameters); // evaluated here, in this thread
        } finally {
            KNOWN_LENGTH.set(false);
        }
    }

    private static final class Counting extends FSInputStream {
        private final FSDataInputStream in;
        private final boolean count;

        Counting(FSDataInputStream in, boolean count) {
            this.in = in;
            this.count = count;
        }

        private int add(int n) {
            if (count && n > 0) {
                TENSOR_FILE_BYTES.addAndGet(n);
            }
            return n;
        }

        @Override
        public void seek(long pos) throws IOException {
            in.seek(pos);
        }

        @Override
        public long getPos() throws IOException {
            return in.getPos();
        }

        @Override
        public boolean seekToNewSource(long targetPos) {
            return false;
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b >= 0) {
                add(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return add(in.read(b, off, len));
        }

        @Override
        public int read(long position, byte[] buffer, int offset, int length) throws IOException {
            return add(in.read(position, buffer, offset, length));
        }

        @Override
        public void readFully(long position, byte[] buffer, int offset, int length) throws IOException {
            if (count) {
                TENSOR_FILE_REQUESTS.incrementAndGet();
            }
            super.readFully(position, buffer, offset, length); // through read(position, ...): bytes counted
        }

        @Override
        public int available() throws IOException {
            return in.available();
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
