package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.Header;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Parsed headers keyed by what identifies a file's content in a listing: path, length, modification
 * time and, where the store has one, the etag. A rewritten file changes one of them, so a stale
 * header is never served. Bounded (least recently used out first); thread-safe.
 */
public final class MetadataCache {
    /** The JVM-wide cache loaders use unless given their own. */
    public static final MetadataCache SHARED = new MetadataCache(4096);

    /**
     * The identity of one file version.
     *
     * @param path the file's full path
     * @param length its length in bytes
     * @param modificationTime its modification time as the file system reports it (milliseconds)
     * @param etag the store's entity tag, or null where the store has none
     */
    public record Key(String path, long length, long modificationTime, String etag) {
    }

    private final int capacity;
    private final Map<Key, Header> entries;

    /**
     * An empty cache.
     *
     * @param capacity the most headers kept; 0 keeps none
     * @throws IllegalArgumentException if {@code capacity} is negative
     */
    public MetadataCache(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be >= 0, got " + capacity);
        }
        this.capacity = capacity;
        this.entries = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, Header> eldest) {
                return size() > MetadataCache.this.capacity;
            }
        };
    }

    /**
     * Looks a file version up, marking it recently used.
     *
     * @param key the file version
     * @return its parsed header, or null when not cached
     */
    public synchronized Header get(Key key) {
        return entries.get(key);
    }

    /**
     * Caches a parsed header, evicting the least recently used one beyond the capacity.
     *
     * @param key the file version the header was read from
     * @param header its parsed header
     */
    public synchronized void put(Key key, Header header) {
        if (capacity > 0) {
            entries.put(key, header);
        }
    }

    /** {@return the number of headers cached} */
    public synchronized int size() {
        return entries.size();
    }

    /** Drops every cached header. */
    public synchronized void clear() {
        entries.clear();
    }
}
