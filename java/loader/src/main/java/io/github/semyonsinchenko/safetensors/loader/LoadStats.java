package io.github.semyonsinchenko.safetensors.loader;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a load has cost so far, updated live by the worker threads (a progress bar reads it while
 * the load runs). Requests are the ranged reads the loader issued; a retry counts again.
 */
public final class LoadStats {
    /** Statistics of a load starting now (the loader makes its own). */
    public LoadStats() {
    }

    private final long startNanos = System.nanoTime();
    final AtomicLong listings = new AtomicLong();
    final AtomicLong headerRequests = new AtomicLong();
    final AtomicLong headerBytes = new AtomicLong();
    final AtomicLong cachedHeaders = new AtomicLong();
    final AtomicLong dataRequests = new AtomicLong();
    final AtomicLong dataBytes = new AtomicLong();
    final AtomicLong retries = new AtomicLong();
    final AtomicLong chunksLoaded = new AtomicLong();
    final AtomicLong tensorsHandedOut = new AtomicLong();
    final AtomicLong bytesHandedOut = new AtomicLong();

    /** {@return directory listings and glob expansions issued by the metadata pass} */
    public long listings() {
        return listings.get();
    }

    /** {@return ranged reads of headers (and of index files)} */
    public long headerRequests() {
        return headerRequests.get();
    }

    /** {@return headers served from the metadata cache instead of the file} */
    public long cachedHeaders() {
        return cachedHeaders.get();
    }

    /** {@return ranged reads of tensor data, retries included} */
    public long dataRequests() {
        return dataRequests.get();
    }

    /** {@return tensor-data bytes delivered into chunk buffers} */
    public long dataBytes() {
        return dataBytes.get();
    }

    /** {@return header and index bytes read} */
    public long headerBytes() {
        return headerBytes.get();
    }

    /** {@return failed requests that were retried} */
    public long retries() {
        return retries.get();
    }

    /** {@return chunks whose every byte has arrived} */
    public long chunksLoaded() {
        return chunksLoaded.get();
    }

    /** {@return tensors (or slices) handed out} */
    public long tensorsHandedOut() {
        return tensorsHandedOut.get();
    }

    /**
     * Bytes of the tensors (or their slices) handed out so far, in their stored dtype: what the
     * consumer asked for, against which {@link #dataBytes()} (what was read) can be compared.
     *
     * @return the bytes
     */
    public long bytesHandedOut() {
        return bytesHandedOut.get();
    }

    /** {@return all requests: headers plus data} */
    public long requests() {
        return headerRequests() + dataRequests();
    }

    /** {@return seconds since the loader was opened} */
    public double seconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    /** {@return data throughput since the loader was opened, in MB/s (10^6 bytes)} */
    public double megabytesPerSecond() {
        double s = seconds();
        return s <= 0 ? 0 : dataBytes() / 1e6 / s;
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT,
                "%d chunks, %d tensors, %d data requests (%d retries), %d header requests (%d cached), "
                        + "%d listings, %d bytes in %.2f s (%.1f MB/s)",
                chunksLoaded(), tensorsHandedOut(), dataRequests(), retries(), headerRequests(), cachedHeaders(),
                listings(), dataBytes(), seconds(), megabytesPerSecond());
    }
}
