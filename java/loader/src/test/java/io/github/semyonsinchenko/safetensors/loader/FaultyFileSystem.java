package io.github.semyonsinchenko.safetensors.loader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FilterFileSystem;
import org.apache.hadoop.fs.FutureDataInputStreamBuilder;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.impl.OpenFileParameters;

/**
 * The local file system behind a counting, fault-injecting filter: installed as {@code fs.file.impl}
 * (with the cache disabled) so {@code file:} paths go through it. Counts listings, status calls,
 * opens and ranged reads; fails or truncates reads chosen by {@link #faults}. Static state: tests
 * using it must not run in parallel (they do not; surefire runs test classes one after another).
 */
public class FaultyFileSystem extends FilterFileSystem {
    /** What to do with one ranged read. */
    public enum Fault { NONE, FAIL, TRUNCATE }

    /** Decides a read's fault from its offset, length and how many data reads came before it. */
    public interface Faults {
        Fault decide(long offset, int length, int readIndex);
    }

    public static volatile Faults faults = (o, l, i) -> Fault.NONE;
    public static final AtomicInteger LISTINGS = new AtomicInteger();
    public static final AtomicInteger STATUS_CALLS = new AtomicInteger();
    public static final AtomicInteger OPENS = new AtomicInteger();
    public static final AtomicInteger READS = new AtomicInteger();
    public static final AtomicLong BYTES = new AtomicLong();
    /** Every ranged read as {offset, length}, in the order issued. */
    public static final java.util.Queue<long[]> RANGES = new java.util.concurrent.ConcurrentLinkedQueue<>();

    public static void reset() {
        faults = (o, l, i) -> Fault.NONE;
        LISTINGS.set(0);
        STATUS_CALLS.set(0);
        OPENS.set(0);
        READS.set(0);
        BYTES.set(0);
        RANGES.clear();
    }

    /** A configuration whose {@code file:} scheme is this file system. */
    public static Configuration conf() {
        Configuration conf = new Configuration();
        conf.set("fs.file.impl", FaultyFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        return conf;
    }

    public FaultyFileSystem() {
        super(new RawLocalFileSystem());
    }

    @Override
    public FileStatus[] listStatus(Path f) throws IOException {
        LISTINGS.incrementAndGet();
        return super.listStatus(f);
    }

    @Override
    public FileStatus getFileStatus(Path f) throws IOException {
        STATUS_CALLS.incrementAndGet();
        return super.getFileStatus(f);
    }

    /** FilterFileSystem hands the builder to the inner file system; build it here so opens come back through us. */
    @Override
    public FutureDataInputStreamBuilder openFile(Path path) {
        return createDataInputStreamBuilder(this, path);
    }

    @Override
    protected CompletableFuture<FSDataInputStream> openFileWithOptions(Path path, OpenFileParameters parameters)
            throws IOException {
        OPENS.incrementAndGet();
        return super.openFileWithOptions(path, parameters)
                .thenApply(in -> new FSDataInputStream(new FaultyStream(in)));
    }

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        OPENS.incrementAndGet();
        return new FSDataInputStream(new FaultyStream(super.open(f, bufferSize)));
    }

    /** Delegates everything; ranged reads may fail or come back short. */
    static final class FaultyStream extends FSInputStream {
        private final FSDataInputStream in;

        FaultyStream(FSDataInputStream in) {
            this.in = in;
        }

        @Override
        public void readVectored(List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate)
                throws IOException {
            for (FileRange r : ranges) {
                int index = READS.getAndIncrement();
                RANGES.add(new long[] {r.getOffset(), r.getLength()});
                Fault fault = faults.decide(r.getOffset(), r.getLength(), index);
                if (fault == Fault.FAIL) {
                    r.setData(CompletableFuture.failedFuture(new IOException("injected failure of read " + index)));
                    continue;
                }
                FileRange inner = FileRange.createFileRange(r.getOffset(), r.getLength());
                in.readVectored(List.of(inner), allocate);
                r.setData(inner.getData().thenApply(buf -> {
                    BYTES.addAndGet(buf.remaining());
                    if (fault == Fault.TRUNCATE && buf.remaining() > 0) {
                        buf.limit(buf.position() + buf.remaining() / 2);
                    }
                    return buf;
                }));
            }
        }

        @Override
        public int read(long position, byte[] buffer, int offset, int length) throws IOException {
            return in.read(position, buffer, offset, length);
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
        public boolean seekToNewSource(long targetPos) throws IOException {
            return in.seekToNewSource(targetPos);
        }

        @Override
        public int read() throws IOException {
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return in.read(b, off, len);
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
