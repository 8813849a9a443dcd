package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.HeaderFraming;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import io.github.semyonsinchenko.safetensors.loader.RangeReads;
import io.github.semyonsinchenko.safetensors.loader.ReadCoalescing;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.util.functional.FutureIO;

/**
 * Where a partition reader gets a file's header and tensor bytes from. Three kinds:
 * <ul>
 *   <li>a local file whose tensor bytes are needed: memory-mapped through {@link SafetensorsFile};
 *       a tensor is copied once, from the mapping into the {@code byte[]} Spark keeps;</li>
 *   <li>a local file whose tensor bytes are not needed (count, shape/dtype-only projections): only
 *       the 8 + N header bytes are read, nothing is mapped;</li>
 *   <li>any other Hadoop {@link FileSystem}: the header with two positioned reads, then the needed
 *       byte ranges, coalesced into few ranged requests by {@link CoalescedFetcher} once the partition
 *       reader has said which it needs ({@link #expect}). The file is never read whole.</li>
 * </ul>
 */
abstract class TensorSource implements Closeable {
    /** Largest binary value Spark can hold (a Java array, less the JVM's header slack). */
    static final long MAX_VALUE_BYTES = Integer.MAX_VALUE - 15;

    abstract Header header();

    /**
     * Copies {@code length} bytes of tensor {@code info}, starting {@code offset} bytes into it,
     * into a new array.
     */
    abstract byte[] read(TensorInfo info, long offset, long length) throws IOException;

    /**
     * Says which cells {@link #read} will be asked for, before the first read, so a remote source can
     * fetch them in few requests; local sources need no plan.
     */
    void expect(List<TensorRef> cells, long maxGapBytes, long maxReadBytes) {}

    static TensorSource open(DatasetFile file, Configuration conf, boolean needData, boolean mmap) throws IOException {
        Path path = new Path(file.path());
        FileSystem fs = path.getFileSystem(conf);
        if (mmap && isLocal(fs)) {
            java.nio.file.Path local = java.nio.file.Path.of(path.toUri().getPath());
            return needData ? new Mapped(local) : new LocalHeaderOnly(local);
        }
        return new Ranged(fs, path, file.length());
    }

    private static boolean isLocal(FileSystem fs) {
        // getUri, not getScheme: RawLocalFileSystem does not implement getScheme.
        return (fs instanceof LocalFileSystem || fs instanceof RawLocalFileSystem)
                && "file".equals(fs.getUri().getScheme());
    }

    static void checkValueSize(String source, TensorInfo info, long length) throws IOException {
        if (length > MAX_VALUE_BYTES) {
            throw new IOException(source + ": tensor \"" + info.name() + "\" needs " + length
                    + " bytes, more than one Spark binary value can hold (2 GiB); select only its shape and dtype, or"
                    + " split it when writing");
        }
    }

    /** Reads and validates only the header of a file through positioned reads (core's framing). */
    static Header readHeader(FSDataInputStream in, long fileSize, String source) throws IOException {
        return HeaderFraming.read(in::readFully, fileSize, source);
    }

    /** A local file mapped into memory. */
    static final class Mapped extends TensorSource {
        private final SafetensorsFile file;

        Mapped(java.nio.file.Path path) throws IOException {
            // SHARED, not CONFINED: Spark may consume a partition's iterator on another thread than the
            // one that opened it (e.g. the feeder thread of a Python UDF).
            try {
                this.file = SafetensorsFile.open(path, MappedFile.Sharing.SHARED);
            } catch (InternalError e) {
                throw mappingFault(path.toString(), e);
            }
        }

        /**
         * A page of the mapping could not be read: the file was truncated (or its storage failed)
         * after it was mapped. The JDK reports that as {@link InternalError}, which Spark treats as
         * fatal for the executor; it is an I/O error of this file.
         */
        static IOException mappingFault(String path, InternalError e) {
            return new IOException(path + ": reading the memory-mapped file faulted (" + e.getMessage() + "); it was"
                    + " truncated or changed while being read", e);
        }

        @Override
        Header header() {
            return file.header();
        }

        @Override
        byte[] read(TensorInfo info, long offset, long length) throws IOException {
            checkValueSize(file.path().toString(), info, length);
            MemorySegment data = file.tensor(info.name()).data();
            byte[] out = new byte[(int) length];
            try {
                MemorySegment.copy(data, ValueLayout.JAVA_BYTE, offset, out, 0, (int) length);
            } catch (InternalError e) {
                throw mappingFault(file.path().toString(), e);
            }
            return out;
        }

        @Override
        public void close() {
            file.close();
        }
    }

    /** A local file of which only the header is needed. */
    static final class LocalHeaderOnly extends TensorSource {
        private final Header header;
        private final String source;

        LocalHeaderOnly(java.nio.file.Path path) throws IOException {
            this.source = path.toString();
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
                this.header = Header.read(ch, source);
            }
        }

        @Override
        Header header() {
            return header;
        }

        @Override
        byte[] read(TensorInfo info, long offset, long length) {
            throw new IllegalStateException(source + ": opened for its header only");
        }

        @Override
        public void close() {}
    }

    /** Any Hadoop FileSystem: header by positioned reads, tensor bytes by coalesced ranged requests. */
    static final class Ranged extends TensorSource {
        private final FSDataInputStream in;
        private final Header header;
        private final String source;
        private CoalescedFetcher fetcher; // until expect(): every range a request of its own

        Ranged(FileSystem fs, Path path, long length) throws IOException {
            this.source = path.toString();
            // The listed length spares S3A a HEAD; we read ranges, never the file sequentially.
            FSDataInputStream s = openListed(fs, path, length);
            boolean ok = false;
            try {
                this.header = readHeader(s, length, source);
                ok = true;
            } finally {
                if (!ok) {
                    s.close();
                }
            }
            this.in = s;
            this.fetcher = new CoalescedFetcher(s, source, List.of(), 0, 0);
        }

        @Override
        Header header() {
            return header;
        }

        @Override
        void expect(List<TensorRef> cells, long maxGapBytes, long maxReadBytes) {
            List<ReadCoalescing.Range> wanted = new ArrayList<>(cells.size());
            for (TensorRef c : cells) {
                wanted.add(new ReadCoalescing.Range(header.dataOffset() + c.info().begin() + c.offset(), c.length()));
            }
            fetcher = new CoalescedFetcher(in, source, wanted, maxGapBytes, maxReadBytes);
        }

        @Override
        byte[] read(TensorInfo info, long offset, long length) throws IOException {
            checkValueSize(source, info, length);
            return fetcher.read(header.dataOffset() + info.begin() + offset, (int) length);
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /**
     * Reads the header of one file, through the Hadoop FileSystem (driver-side schema inference).
     * Opened with the listed length, like {@link Ranged}: a plain {@code open} costs S3A a HEAD per file.
     */
    static Header readHeader(DatasetFile file, Configuration conf) throws IOException {
        Path path = new Path(file.path());
        FileSystem fs = path.getFileSystem(conf);
        try (FSDataInputStream in = openListed(fs, path, file.length())) {
            return readHeader(in, file.length(), path.toString());
        }
    }

    /** Opens for ranged reads with the length from the listing, so the store needs no status request. */
    static FSDataInputStream openListed(FileSystem fs, Path path, long length) throws IOException {
        return FutureIO.awaitFuture(fs.openFile(path)
                .opt(RangeReads.READ_POLICY, "random, vector")
                .optLong("fs.option.openfile.length", length)
                .build());
    }
}
