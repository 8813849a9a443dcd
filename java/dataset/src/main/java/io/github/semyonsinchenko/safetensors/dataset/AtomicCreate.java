package io.github.semyonsinchenko.safetensors.dataset;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSDataOutputStreamBuilder;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathIOException;

/**
 * Creates a file with its whole content only if no file of that name exists, in one step another
 * writer cannot interleave with: the operation optimistic commits are built on. How depends on the
 * file system (format/dataset.md, "Concurrent writers"):
 * <ul>
 *   <li>{@link #LINK}, local file systems: the content goes to a temporary file, then a hard link
 *       ({@code link(2)}) gives it the final name, which fails if the name exists;</li>
 *   <li>{@link #RENAME}, HDFS (and viewfs, webhdfs): temporary file, then a rename that refuses to
 *       replace ({@code FileContext.rename} without {@code OVERWRITE}), atomic on the NameNode;</li>
 *   <li>{@link #CONDITIONAL_PUT}, S3A: one PUT with {@code If-None-Match: *} (Hadoop 3.5's S3A sends it
 *       for a create with {@code fs.option.create.conditional.overwrite}; a store that refuses answers
 *       412, which S3A reports as {@code RemoteFileChangedException});</li>
 *   <li>{@link #UNSAFE}, every other store: a create without overwrite, which on most object stores
 *       checks and writes in two steps. Concurrent commits are then not arbitrated: one writer per
 *       dataset at a time (a race this check happens to see is refused, but not every race is seen).</li>
 * </ul>
 */
public enum AtomicCreate {
    /** Hard link from a temporary file (local file systems). */
    LINK,
    /** Rename without overwrite from a temporary file (HDFS). */
    RENAME,
    /** A conditional PUT, {@code If-None-Match: *} (S3A). */
    CONDITIONAL_PUT,
    /** No atomic create-if-absent: single writer per dataset. */
    UNSAFE;

    /** S3A's create option for a conditional PUT (Hadoop 3.5, HADOOP-19256). */
    static final String S3A_CONDITIONAL_OPTION = "fs.option.create.conditional.overwrite";

    /** {@return whether concurrent commits are arbitrated by the store} */
    public boolean arbitrates() {
        return this != UNSAFE;
    }

    /**
     * The way the file system of {@code fs} creates atomically.
     *
     * @param fs the file system
     * @return its strategy
     */
    public static AtomicCreate of(FileSystem fs) {
        String scheme = String.valueOf(fs.getUri().getScheme()).toLowerCase(Locale.ROOT);
        return switch (scheme) {
            case "file" -> LINK;
            case "hdfs", "viewfs", "webhdfs", "swebhdfs" -> RENAME;
            case "s3a" -> CONDITIONAL_PUT;
            default -> UNSAFE;
        };
    }

    /**
     * Writes {@code bytes} as {@code target} if no file has that name.
     *
     * @param fs the file system
     * @param target the file to create
     * @param bytes its whole content
     * @param fsync force the content to stable storage first
     * @return true when this call created it, false when the name was taken
     * @throws IOException when the file system fails, or cannot create atomically as promised
     */
    public boolean create(FileSystem fs, Path target, byte[] bytes, boolean fsync) throws IOException {
        return switch (this) {
            case LINK -> link(fs, target, bytes, fsync);
            case RENAME -> renameNoReplace(fs, target, bytes, fsync);
            case CONDITIONAL_PUT -> conditionalPut(fs, target, bytes);
            case UNSAFE -> plainCreate(fs, target, bytes);
        };
    }

    private static boolean link(FileSystem fs, Path target, byte[] bytes, boolean fsync) throws IOException {
        java.nio.file.Path dst = java.nio.file.Path.of(fs.makeQualified(target).toUri());
        java.nio.file.Path tmp = dst.resolveSibling(DatasetLayout.tempName(dst.getFileName().toString()));
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.wrap(bytes));
                if (fsync) {
                    ch.force(true);
                }
            }
            try {
                Files.createLink(dst, tmp);
            } catch (FileAlreadyExistsException taken) {
                return false;
            } catch (UnsupportedOperationException | java.nio.file.FileSystemException noLinks) {
                if (noLinks instanceof java.nio.file.AccessDeniedException denied) {
                    throw denied;
                }
                throw new IOException(dst.getParent() + ": this local file system cannot make hard links ("
                        + noLinks + "), the atomic create-if-absent commits rely on; keep the dataset on a file"
                        + " system that can (ext4, xfs, btrfs, tmpfs, NFSv3+)", noLinks);
            }
            if (fsync) {
                DatasetCommit.syncDirectory(fs, target.getParent());
            }
            return true;
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static boolean renameNoReplace(FileSystem fs, Path target, byte[] bytes, boolean fsync)
            throws IOException {
        Path tmp = new Path(target.getParent(), DatasetLayout.tempName(target.getName()));
        try {
            try (FSDataOutputStream out = fs.create(tmp, false)) {
                out.write(bytes);
                if (fsync) {
                    out.hsync();
                }
            }
            try {
                FileContext.getFileContext(fs.getUri(), fs.getConf()).rename(tmp, target, Options.Rename.NONE);
                return true;
            } catch (org.apache.hadoop.fs.FileAlreadyExistsException taken) {
                return false;
            }
        } finally {
            fs.delete(tmp, false);
        }
    }

    private static boolean conditionalPut(FileSystem fs, Path target, byte[] bytes) throws IOException {
        FSDataOutputStreamBuilder<?, ?> b = fs.createFile(target).overwrite(false);
        b.must(S3A_CONDITIONAL_OPTION, true);
        OutputStream out;
        try {
            out = (OutputStream) b.build();
        } catch (PathIOException unavailable) {
            throw new IOException(target + ": this S3 connection cannot make conditional writes (" + unavailable
                    .getMessage() + "; fs.s3a.create.conditional.enabled=false?), which concurrent commits rely"
                    + " on; enable them, or run one writer per dataset at a time with a file system that does"
                    + " not promise them", unavailable);
        }
        try {
            try (OutputStream closing = out) {
                closing.write(bytes);
            }
            return true;
        } catch (IOException e) {
            if (isPreconditionFailed(e)) {
                return false;
            }
            throw e;
        }
    }

    /** S3A's translation of 412 PreconditionFailed (and of 409, a conditional write racing another). */
    private static boolean isPreconditionFailed(IOException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String name = t.getClass().getSimpleName();
            String m = String.valueOf(t.getMessage());
            if (name.equals("RemoteFileChangedException") || m.contains("PreconditionFailed")
                    || m.contains("Status Code: 412") || m.contains("ConditionalRequestConflict")) {
                return true;
            }
        }
        return false;
    }

    private static boolean plainCreate(FileSystem fs, Path target, byte[] bytes) throws IOException {
        try (FSDataOutputStream out = fs.create(target, false)) {
            out.write(bytes);
        } catch (org.apache.hadoop.fs.FileAlreadyExistsException taken) {
            return false;
        }
        return true;
    }
}
