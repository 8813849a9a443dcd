package io.github.semyonsinchenko.safetensors.spark.read;

import io.github.semyonsinchenko.safetensors.loader.RangeReads;
import io.github.semyonsinchenko.safetensors.loader.ReadCoalescing;
import io.github.semyonsinchenko.safetensors.loader.ReadCoalescing.Range;
import io.github.semyonsinchenko.safetensors.loader.ReadCoalescing.Read;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.FSDataInputStream;

/**
 * The byte fetching of the remote read path: the byte ranges a partition will emit (only the
 * selected tensors of the kept rows) are planned up front by the loader's {@link ReadCoalescing}
 * into few reads, each fetched with one ranged request when its first range is asked for; a range
 * is then handed out as a copy of its slice (Spark keeps a {@code byte[]} per value), and a read's
 * buffer is dropped once all of its ranges are out. A read serving one range is fetched straight
 * into the value's array.
 *
 * <p>Rows normally ask in storage order, so one buffer is held at a time. When they do not, at most
 * {@code 2 * maxReadBytes} of buffers (plus the one in use) are kept; an older one is dropped and
 * fetched again if asked for later: more requests, never more memory.
 */
final class CoalescedFetcher {
    private final FSDataInputStream in;
    private final String source;
    private final List<Read> reads;
    private final Map<Range, Integer> readOf = new HashMap<>();
    private final int[] pending;
    private final Map<Integer, byte[]> held = new LinkedHashMap<>();
    private final long heldLimit;
    private long heldBytes;
    private long requests;

    /**
     * @param wanted every range (absolute offset, length) that {@link #read} will be asked for, with
     *     repeats for ranges asked for more than once
     */
    CoalescedFetcher(FSDataInputStream in, String source, List<Range> wanted, long maxGapBytes, long maxReadBytes) {
        this.in = in;
        this.source = source;
        this.reads = ReadCoalescing.coalesce(wanted, maxGapBytes, maxReadBytes);
        this.pending = new int[reads.size()];
        for (int r = 0; r < reads.size(); r++) {
            for (int m : reads.get(r).members()) {
                readOf.putIfAbsent(wanted.get(m), r);
                pending[readOf.get(wanted.get(m))]++;
            }
        }
        this.heldLimit = 2 * maxReadBytes;
    }

    /** The planned reads, in offset order. */
    List<Read> reads() {
        return reads;
    }

    /** Requests issued so far. */
    long requests() {
        return requests;
    }

    /** {@code length} bytes at absolute {@code offset}, in a new array. */
    byte[] read(long offset, int length) throws IOException {
        Integer r = readOf.get(new Range(offset, length));
        if (r == null) { // not planned (cannot happen from the partition reader): a request of its own
            return fetch(offset, length);
        }
        Read read = reads.get(r);
        if (read.offset() == offset && read.length() == length && pending[r] == 1 && !held.containsKey(r)) {
            pending[r] = 0;
            return fetch(offset, length); // the read is exactly this range: no staging copy
        }
        byte[] buffer = held.get(r);
        if (buffer == null) {
            buffer = fetch(read.offset(), Math.toIntExact(read.length()));
            held.put(r, buffer);
            heldBytes += buffer.length;
            evictOlderThan(r);
        }
        int from = Math.toIntExact(offset - read.offset());
        byte[] out = Arrays.copyOfRange(buffer, from, from + length);
        if (pending[r] > 0 && --pending[r] == 0) {
            heldBytes -= held.remove(r).length;
        }
        return out;
    }

    private void evictOlderThan(int keep) {
        Iterator<Map.Entry<Integer, byte[]>> it = held.entrySet().iterator();
        while (heldBytes > heldLimit + held.get(keep).length && it.hasNext()) {
            Map.Entry<Integer, byte[]> e = it.next();
            if (e.getKey() != keep) {
                heldBytes -= e.getValue().length;
                it.remove();
            }
        }
    }

    /** One ranged request (one GET on S3A) for exactly these bytes. */
    private byte[] fetch(long offset, int length) throws IOException {
        byte[] out = new byte[length];
        if (length > 0) {
            requests++;
            RangeReads.readInto(in, offset, MemorySegment.ofArray(out), source);
        }
        return out;
    }
}
