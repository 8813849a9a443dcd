package io.github.semyonsinchenko.safetensors.kernels;

import io.github.semyonsinchenko.safetensors.format.MappedFileFaultException;
import io.github.semyonsinchenko.safetensors.format.SafetensorsException;
import io.github.semyonsinchenko.safetensors.format.Violation;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.LongFunction;

/**
 * Which file a mapped address belongs to, so that a memory fault (a file truncated by another
 * process while mapped) can name the file and the tensor instead of crashing or throwing a bare
 * {@link InternalError}. {@code SafetensorsFile} registers each mapping for as long as it is open;
 * code that maps files itself may register its mappings too.
 *
 * <p>Lookups happen only when a fault is being reported; registering and closing cost one entry
 * in a concurrent sorted map.
 */
public final class MappedFiles {
    private static final ConcurrentSkipListMap<Long, Region> REGIONS = new ConcurrentSkipListMap<>();

    private MappedFiles() {}

    /**
     * A registered mapping: {@code source} names the file (its path), {@code tensorAt} gives the
     * tensor holding a byte offset of the mapping, or null.
     */
    private record Region(long start, long size, String source, LongFunction<String> tensorAt) {
        boolean contains(long address) {
            return address - start >= 0 && address - start < size;
        }
    }

    /** Removes its mapping from the registry; idempotent. */
    public static final class Registration implements AutoCloseable {
        private final long start;
        private final Region region;

        private Registration(long start, Region region) {
            this.start = start;
            this.region = region;
        }

        @Override
        public void close() {
            REGIONS.remove(start, region);
        }
    }

    /**
     * Registers {@code mapping} (a native segment) as the bytes of {@code source}.
     *
     * @param tensorAt the tensor at a byte offset of the mapping, or null when none is known
     */
    public static Registration register(MemorySegment mapping, String source, LongFunction<String> tensorAt) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(tensorAt, "tensorAt");
        if (!mapping.isNative() || mapping.byteSize() == 0) {
            return new Registration(0, null);
        }
        Region r = new Region(mapping.address(), mapping.byteSize(), source, tensorAt);
        REGIONS.put(r.start(), r);
        return new Registration(r.start(), r);
    }

    private static Region regionOf(long address) {
        Map.Entry<Long, Region> e = REGIONS.floorEntry(address);
        return e != null && e.getValue().contains(address) ? e.getValue() : null;
    }

    private static final Object NEVER_LOCKED = new Object();

    /**
     * Makes the JDK raise here, not later, the {@link InternalError} it owes this thread for a
     * faulting memory access. In JIT-compiled code the JDK raises that error asynchronously, at the
     * thread's next safepoint poll or VM transition, which may already be in the caller of the code
     * that faulted. {@link Thread#holdsLock} is a call into the VM whose way back checks for such
     * errors; it costs tens of nanoseconds, so it is made once per bulk call, never per element.
     */
    public static void raisePendingFault() {
        Thread.holdsLock(NEVER_LOCKED);
    }

    /**
     * True for the JDK's error for a faulting memory access (an FFM or Unsafe read of a lost page:
     * "a fault occurred in an unsafe memory access operation").
     */
    public static boolean isMemoryFault(Throwable t) {
        return t instanceof InternalError && t.getMessage() != null
                && t.getMessage().contains("unsafe memory access");
    }

    /**
     * The exception for a memory fault ({@link #isMemoryFault}) that code outside the kernels met
     * while copying mapped memory itself ({@link MemorySegment#copy}): names the registered mapping
     * among {@code args}, which alternate names and segments ("src", s, "dst", d).
     *
     * @param call what was being done, for the message
     * @param cause the JDK's error
     * @param args names and segments, alternating
     * @return the exception to throw
     */
    public static MappedFileFaultException faultDuring(String call, Throwable cause, Object... args) {
        return fault(call, 0, cause, args);
    }

    /**
     * The exception for a fault during {@code call}. {@code address} is where it faulted (0 when
     * the JDK does not say); {@code args} alternates names and segments ("src", s, "dst", d) and
     * says which argument the address, or else the one registered mapping among them, is in.
     */
    static MappedFileFaultException fault(String call, long address, Throwable cause, Object... args) {
        String arg = null;
        Region region = null;
        long at = address;
        String ambiguous = null;
        if (address != 0) {
            region = regionOf(address);
            arg = argumentHolding(address, args);
        } else {
            // No address: name the argument lying in a registered mapping, if exactly one does.
            List<String> names = new ArrayList<>();
            Set<String> sources = new LinkedHashSet<>();
            for (int i = 0; i + 1 < args.length; i += 2) {
                MemorySegment s = (MemorySegment) args[i + 1];
                Region r = s.isNative() && s.byteSize() > 0 ? regionOf(s.address()) : null;
                if (r != null) {
                    names.add((String) args[i]);
                    sources.add(r.source());
                    region = r;
                    at = s.address();
                }
            }
            if (names.size() > 1) {
                region = null;
                arg = String.join(" or ", names);
                ambiguous = String.join(" or ", sources);
            } else if (names.size() == 1) {
                arg = names.get(0);
            }
        }
        String detail = String.format(Locale.ROOT, "%s faulted%s%s", call,
                arg == null ? "" : " accessing " + arg,
                address == 0 ? "" : String.format(Locale.ROOT, " at address 0x%x", address));
        SafetensorsException e;
        if (region != null) {
            long offset = at - region.start();
            detail += String.format(Locale.ROOT, address != 0 ? ", byte %d of the file"
                    : " (it starts at byte %d of the file)", offset);
            e = new SafetensorsException(Violation.FILE_CHANGED_WHILE_MAPPED, region.source(),
                    region.tensorAt().apply(offset), detail, cause);
        } else {
            e = new SafetensorsException(Violation.FILE_CHANGED_WHILE_MAPPED,
                    ambiguous != null ? ambiguous : "memory not registered as a mapped file", null, detail, cause);
        }
        return new MappedFileFaultException(e);
    }

    private static String argumentHolding(long address, Object... args) {
        for (int i = 0; i + 1 < args.length; i += 2) {
            MemorySegment s = (MemorySegment) args[i + 1];
            if (s.isNative() && address - s.address() >= 0 && address - s.address() < s.byteSize()) {
                return (String) args[i];
            }
        }
        return null;
    }
}
