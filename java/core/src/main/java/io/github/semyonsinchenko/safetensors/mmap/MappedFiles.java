package io.github.semyonsinchenko.safetensors.mmap;

import io.github.semyonsinchenko.safetensors.format.SafetensorsException;
import io.github.semyonsinchenko.safetensors.format.Violation;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;

/**
 * Which file a mapped address belongs to, so that a memory fault (a file truncated by another
 * process while mapped) can name the file and the tensor instead of crashing or throwing a bare
 * {@link InternalError}. {@link MappedFile} registers each mapping for as long as it is open; the
 * kernels and {@link #copy} consult the registry when a call on mapped memory faults.
 *
 * <p>Lookups happen only when a fault is being reported; registering and closing cost one entry
 * in a concurrent sorted map. A mapping registered with its file's current size (see
 * {@link #register(MemorySegment, String, LongFunction, LongSupplier)}) can also be named when the
 * JDK does not say where a read faulted: it is the one whose file is now shorter than its mapping.
 */
public final class MappedFiles {
    private static final ConcurrentSkipListMap<Long, Region> REGIONS = new ConcurrentSkipListMap<>();

    private MappedFiles() {}

    /**
     * A registered mapping: {@code source} names the file (its path), {@code tensorAt} gives the
     * tensor holding a byte offset of the mapping, or null; {@code fileSize} the file's length now,
     * or -1 when unknown.
     */
    private record Region(long start, long size, String source, LongFunction<String> tensorAt, LongSupplier fileSize) {
        boolean contains(long address) {
            return address - start >= 0 && address - start < size;
        }

        /** The file's length now, when it is shorter than the mapping; otherwise -1. */
        long shrunkTo() {
            long now;
            try {
                now = fileSize.getAsLong();
            } catch (RuntimeException e) {
                return -1; // closed meanwhile, or the size cannot be read: nothing to say
            }
            return now >= 0 && now < size ? now : -1;
        }
    }

    private static final LongSupplier UNKNOWN_SIZE = () -> -1;

    /** Removes its mapping from the registry; idempotent. */
    static final class Registration implements AutoCloseable {
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
    static Registration register(MemorySegment mapping, String source, LongFunction<String> tensorAt) {
        return register(mapping, source, tensorAt, UNKNOWN_SIZE);
    }

    /**
     * Registers {@code mapping} (a native segment mapping a whole file from byte 0) as the bytes of
     * {@code source}, with a way to read the file's current length: a fault the JDK reports without
     * an address, and a truncation that loses only part of a page (read back as zeros, no fault),
     * can then be told apart from the other mappings (see {@link #faultIn} and {@link #truncation}).
     *
     * @param tensorAt the tensor at a byte offset of the mapping, or null when none is known
     * @param fileSize the file's length now (e.g. {@code FileChannel.size()} of an open channel, which
     *     still sees the mapped file after a rename over its path), or -1 when unknown; called only
     *     when a fault or a truncation is looked for
     */
    static Registration register(MemorySegment mapping, String source, LongFunction<String> tensorAt,
            LongSupplier fileSize) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(tensorAt, "tensorAt");
        Objects.requireNonNull(fileSize, "fileSize");
        if (!mapping.isNative() || mapping.byteSize() == 0) {
            return new Registration(0, null);
        }
        Region r = new Region(mapping.address(), mapping.byteSize(), source, tensorAt, fileSize);
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
     *
     * @param t any throwable
     * @return whether it is that error
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
     *
     * @param call what was being done, for the message
     * @param address the faulting address, or 0 when unknown
     * @param cause the JDK's error, or null (a native fault)
     * @param args names and segments, alternating
     * @return the exception to throw
     */
    public static MappedFileFaultException fault(String call, long address, Throwable cause, Object... args) {
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
                // Several mapped arguments: the one whose file shrank is the one that faulted.
                List<Region> shrunk = new ArrayList<>();
                for (int i = 0; i + 1 < args.length; i += 2) {
                    MemorySegment s = (MemorySegment) args[i + 1];
                    Region r = s.isNative() && s.byteSize() > 0 ? regionOf(s.address()) : null;
                    if (r != null && r.shrunkTo() >= 0 && !shrunk.contains(r)) {
                        shrunk.add(r);
                        arg = (String) args[i];
                        at = s.address();
                    }
                }
                if (shrunk.size() == 1) {
                    region = shrunk.get(0);
                    names = List.of(arg);
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

    /**
     * The typed exception for a memory fault that the JDK reported without an address ({@code cause},
     * an {@link InternalError} for which {@link #isMemoryFault} holds) while {@code what} (e.g.
     * "building a train batch") read some of {@code mappings}. It names the registered mapping among
     * them whose file is now shorter than mapped, and the first byte lost; when that cannot be told
     * (no file shrank, or several did), it names every candidate file.
     *
     * @param what what was being done, for the message
     * @param cause the JDK's error
     * @param mappings the memory the faulting code read or wrote
     * @return the exception to throw
     */
    public static MappedFileFaultException faultIn(String what, Throwable cause, Collection<MemorySegment> mappings) {
        List<Region> regions = regionsOf(mappings);
        List<Region> shrunk = regions.stream().filter(r -> r.shrunkTo() >= 0).toList();
        List<Region> named = shrunk.isEmpty() ? regions : shrunk;
        if (named.size() == 1) {
            Region r = named.get(0);
            long now = r.shrunkTo();
            return truncated(r, what + " faulted", now, cause);
        }
        String source = named.isEmpty() ? "memory not registered as a mapped file"
                : named.stream().map(Region::source).reduce((a, b) -> a + " or " + b).orElseThrow();
        String detail = what + " faulted" + (shrunk.size() > 1 ? "; each of these files is shorter than its mapping" : "");
        return new MappedFileFaultException(new SafetensorsException(Violation.FILE_CHANGED_WHILE_MAPPED, source,
                null, detail, cause));
    }

    /**
     * Null when the file of every registered mapping among {@code mappings} is still as long as its
     * mapping; otherwise the typed exception naming the first one that shrank and its first byte
     * lost. For a check after a read that did not fault: a file cut inside a page reads back as
     * zeros up to the end of that page, silently. Costs one file-size call per mapping.
     *
     * @param what what was being done, for the message
     * @param mappings the memory read
     * @return the exception to throw, or null when no file shrank
     */
    public static MappedFileFaultException truncation(String what, Collection<MemorySegment> mappings) {
        for (Region r : regionsOf(mappings)) {
            long now = r.shrunkTo();
            if (now >= 0) {
                return truncated(r, what, now, null);
            }
        }
        return null;
    }

    /**
     * {@link MemorySegment#copy(MemorySegment, long, MemorySegment, long, long)} for memory that may
     * be a mapping (all or part of one): a page lost to a truncation is a
     * {@link MappedFileFaultException} naming the file and its first byte lost, never the JDK's
     * {@link InternalError} and never a crash; so is a source file found shorter than its mapping
     * after the copy (cut inside a page, which reads back as zeros). The way for bytes of a mapped
     * file to leave the JVM's guarded accesses (e.g. into a buffer of another runtime, which has no
     * such guard).
     *
     * @param src the source, mapped or not
     * @param srcOffset the first source byte
     * @param dst the destination
     * @param dstOffset the first destination byte
     * @param bytes how many bytes to copy
     * @throws MappedFileFaultException if a mapped file shrank under the copy
     * @throws IndexOutOfBoundsException if a range lies outside its segment
     */
    public static void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        String what = String.format(Locale.ROOT, "copying %d bytes", bytes);
        try {
            MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
            raisePendingFault();
        } catch (InternalError e) {
            if (isMemoryFault(e)) {
                throw faultIn(what, e, List.of(src, dst));
            }
            throw e;
        }
        // A file cut inside a page reads back as zeros there, without a fault.
        MappedFileFaultException cut = truncation(what, List.of(src));
        if (cut != null) {
            throw cut;
        }
    }

    private static List<Region> regionsOf(Collection<MemorySegment> mappings) {
        List<Region> out = new ArrayList<>();
        for (MemorySegment s : mappings) {
            Region r = s.isNative() && s.byteSize() > 0 ? regionOf(s.address()) : null;
            if (r != null && !out.contains(r)) {
                out.add(r);
            }
        }
        return out;
    }

    private static MappedFileFaultException truncated(Region r, String what, long now, Throwable cause) {
        String detail = now < 0 ? what : String.format(Locale.ROOT,
                "%s; the file is now %d bytes, %d were mapped: bytes %d to %d are gone", what, now, r.size(), now,
                r.size() - 1);
        return new MappedFileFaultException(new SafetensorsException(Violation.FILE_CHANGED_WHILE_MAPPED, r.source(),
                now < 0 ? null : r.tensorAt().apply(now), detail, cause));
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
