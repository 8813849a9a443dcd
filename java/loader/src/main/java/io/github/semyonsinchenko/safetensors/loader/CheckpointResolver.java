package io.github.semyonsinchenko.safetensors.loader;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.HeaderFraming;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.EtagSource;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The metadata pass: turns what the user named (files, directories, globs, a Hugging Face
 * {@code model.safetensors.index.json}) into listed files and their headers.
 *
 * <p>Lengths come from listings (one per directory, or the glob's), never from a per-file status
 * call; files are opened with that listing's {@link FileStatus}, so S3A issues no HEAD. A header
 * costs one ranged read of {@code speculativeHeaderBytes}; a second read happens only when the
 * header is larger. Parsing and validation are core's {@link Header}. An index is checked against
 * the headers of the shards it names ({@link ShardIndex#check}) as soon as they are read, before
 * anything is planned or handed out; so is the rule that no tensor name is in two files.
 */
final class CheckpointResolver {
    /** The Hugging Face shard-set index names end with this. */
    static final String INDEX_SUFFIX = ".index.json";
    static final String SAFETENSORS_SUFFIX = ".safetensors";

    private final Configuration conf;
    private final MetadataCache cache;
    private final int speculativeHeaderBytes;
    private final LoadStats stats;
    private final Map<Path, FileStatus[]> listings = new HashMap<>();
    private final List<IndexedShards> indexes = new ArrayList<>();

    /** An index met while resolving, with its shards by file name, to check once their headers are read. */
    private record IndexedShards(ShardIndex index, FileSystem fs, Path dir, Map<String, Listed> shards) {}

    CheckpointResolver(Configuration conf, MetadataCache cache, int speculativeHeaderBytes, LoadStats stats) {
        this.conf = conf;
        this.cache = cache;
        this.speculativeHeaderBytes = Math.max(Header.PREFIX_BYTES, speculativeHeaderBytes);
        this.stats = stats;
    }

    /** A listed file and its file system, ready to open without a status call. */
    record Listed(FileSystem fs, FileStatus status) {
        String path() {
            return status.getPath().toString();
        }
    }

    /** Resolves every input to safetensors files (deduplicated, in the order found). */
    List<Listed> resolve(List<String> inputs) throws IOException {
        if (inputs.isEmpty()) {
            throw new IllegalArgumentException("no checkpoint path given");
        }
        Map<String, Listed> files = new LinkedHashMap<>();
        for (String input : inputs) {
            Path path = new Path(input);
            FileSystem fs = path.getFileSystem(conf);
            path = fs.makeQualified(path);
            if (isGlob(input)) {
                stats.listings.incrementAndGet();
                FileStatus[] matches = fs.globStatus(path);
                if (matches == null || matches.length == 0) {
                    throw new FileNotFoundException("no file matches " + input);
                }
                for (FileStatus st : matches) {
                    addFileOrDirectory(fs, st, input, files);
                }
            } else if (path.getName().endsWith(INDEX_SUFFIX)) {
                for (Listed shard : shardsOfIndex(fs, path)) {
                    files.putIfAbsent(shard.path(), shard);
                }
            } else {
                addFileOrDirectory(fs, statusFromParentListing(fs, path, input), input, files);
            }
        }
        if (files.isEmpty()) {
            throw new FileNotFoundException("no .safetensors file in " + String.join(", ", inputs));
        }
        return new ArrayList<>(files.values());
    }

    private void addFileOrDirectory(FileSystem fs, FileStatus st, String input, Map<String, Listed> out)
            throws IOException {
        if (st.isDirectory()) {
            for (FileStatus child : list(fs, st.getPath())) {
                if (child.isFile() && child.getPath().getName().endsWith(SAFETENSORS_SUFFIX)) {
                    out.putIfAbsent(child.getPath().toString(), new Listed(fs, child));
                }
            }
        } else {
            out.putIfAbsent(st.getPath().toString(), new Listed(fs, st));
        }
    }

    /** The status of {@code path} from its parent's listing: one LIST for many files, no HEAD. */
    private FileStatus statusFromParentListing(FileSystem fs, Path path, String input) throws IOException {
        Path parent = path.getParent();
        if (parent == null) { // a bucket or file-system root: a directory
            return new FileStatus(0, true, 0, 0, 0, path);
        }
        for (FileStatus st : list(fs, parent)) {
            if (st.getPath().getName().equals(path.getName())) {
                return st;
            }
        }
        throw new FileNotFoundException(input + " does not exist (not in the listing of " + parent + ")");
    }

    private FileStatus[] list(FileSystem fs, Path dir) throws IOException {
        FileStatus[] cached = listings.get(dir);
        if (cached == null) {
            stats.listings.incrementAndGet();
            cached = fs.listStatus(dir);
            listings.put(dir, cached);
        }
        return cached;
    }

    /** The shards a Hugging Face index names in its {@code weight_map}, from the index's directory listing. */
    private List<Listed> shardsOfIndex(FileSystem fs, Path index) throws IOException {
        FileStatus indexStatus = statusFromParentListing(fs, index, index.toString());
        if (indexStatus.getLen() > Integer.MAX_VALUE - 8) {
            throw new IOException(index + " is too large for an index file: " + indexStatus.getLen() + " bytes");
        }
        byte[] json;
        try (FSDataInputStream in = RangeReads.open(fs, indexStatus)) {
            json = RangeReads.readBytes(in, 0, (int) indexStatus.getLen(), index.toString());
        }
        stats.headerRequests.incrementAndGet();
        stats.headerBytes.addAndGet(json.length);
        ShardIndex parsed = ShardIndex.parse(json, index.toString());
        Map<String, FileStatus> siblings = new HashMap<>();
        for (FileStatus st : list(fs, index.getParent())) {
            siblings.put(st.getPath().getName(), st);
        }
        Map<String, Listed> shards = new LinkedHashMap<>();
        for (String name : parsed.shardNames()) {
            FileStatus st = siblings.get(name);
            if (st == null || !st.isFile()) {
                throw new FileNotFoundException(String.format(Locale.ROOT,
                        "%s names shard %s, which is not in %s", index, name, index.getParent()));
            }
            shards.put(name, new Listed(fs, st));
        }
        indexes.add(new IndexedShards(parsed, fs, index.getParent(), shards));
        return new ArrayList<>(shards.values());
    }

    /** Reads (or takes from the cache) the headers of all files, in parallel on {@code executor}. */
    List<CheckpointFile> headers(List<Listed> files, ExecutorService executor) throws IOException {
        List<CompletableFuture<CheckpointFile>> futures = new ArrayList<>();
        for (Listed f : files) {
            futures.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return header(f);
                } catch (IOException e) {
                    throw new CompletionException(e);
                }
            }, executor));
        }
        List<CheckpointFile> out = new ArrayList<>();
        for (CompletableFuture<CheckpointFile> f : futures) {
            try {
                out.add(f.join());
            } catch (CompletionException e) {
                if (e.getCause() instanceof IOException io) {
                    throw io;
                }
                throw e;
            }
        }
        checkIndexes(out);
        checkEachNameOnce(out);
        return out;
    }

    /** No tensor name is in two of {@code files} (an index's shards are checked by the index first). */
    private static void checkEachNameOnce(List<CheckpointFile> files) throws TensorInTwoFilesException {
        Map<String, String> holder = new HashMap<>();
        for (CheckpointFile f : files) {
            for (TensorInfo t : f.header().tensors()) {
                String first = holder.putIfAbsent(t.name(), f.path());
                if (first != null) {
                    throw new TensorInTwoFilesException(t.name(), first, f.path());
                }
            }
        }
    }

    /** Each index met in {@link #resolve} against the headers of its shards (all among {@code files}). */
    private void checkIndexes(List<CheckpointFile> files) throws IOException {
        Map<String, Header> byPath = new HashMap<>();
        for (CheckpointFile f : files) {
            byPath.put(f.path(), f.header());
        }
        for (IndexedShards ix : indexes) {
            Map<String, Header> byName = new HashMap<>();
            ix.shards().forEach((name, listed) -> byName.put(name, byPath.get(listed.path())));
            ix.index().check(byName, tensor -> holderAmongUnnamed(ix, tensor));
        }
    }

    /**
     * The file name of a safetensors file next to the index, not named by it, that holds
     * {@code tensor}; null if none. Reads those files' headers: only to name the right shard in the
     * error for a tensor that the shard the index names lacks.
     */
    private String holderAmongUnnamed(IndexedShards ix, String tensor) throws IOException {
        for (FileStatus st : list(ix.fs(), ix.dir())) {
            String name = st.getPath().getName();
            if (st.isFile() && name.endsWith(SAFETENSORS_SUFFIX) && !ix.shards().containsKey(name)) {
                try {
                    if (header(new Listed(ix.fs(), st)).header().contains(tensor)) {
                        return name;
                    }
                } catch (IOException e) {
                    // not a readable safetensors file: it holds nothing we could name
                }
            }
        }
        return null;
    }

    CheckpointFile header(Listed file) throws IOException {
        FileStatus st = file.status();
        String path = file.path();
        String etag = st instanceof EtagSource e ? e.getEtag() : null;
        MetadataCache.Key key = new MetadataCache.Key(path, st.getLen(), st.getModificationTime(), etag);
        Header header = cache.get(key);
        if (header != null) {
            stats.cachedHeaders.incrementAndGet();
        } else {
            header = readHeader(file);
            cache.put(key, header);
        }
        return new CheckpointFile(path, st.getLen(), st.getModificationTime(), header);
    }

    private Header readHeader(Listed file) throws IOException {
        long length = file.status().getLen();
        String path = file.path();
        try (FSDataInputStream in = RangeReads.open(file.fs(), file.status())) {
            return HeaderFraming.read((position, buffer) -> {
                RangeReads.readInto(in, position, MemorySegment.ofArray(buffer), path);
                stats.headerRequests.incrementAndGet();
                stats.headerBytes.addAndGet(buffer.length);
            }, length, speculativeHeaderBytes, path);
        }
    }

    private static boolean isGlob(String input) {
        return input.indexOf('*') >= 0 || input.indexOf('?') >= 0 || input.indexOf('[') >= 0
                || input.indexOf('{') >= 0;
    }
}
