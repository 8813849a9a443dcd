package io.github.semyonsinchenko.safetensors.dataset;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Whether a path is really absent. Hadoop reports "no such file" and, on the local file system,
 * "permission denied" alike, as a {@code FileNotFoundException} (the JDK's {@code FileInputStream}
 * does, and {@code RawLocalFileSystem.getFileStatus} answers "absent" for a file in a directory it may
 * not search); a dataset must never take an unreadable manifest for a missing one.
 */
final class Probe {
    private Probe() {}

    /** True only when {@code path} certainly does not exist. */
    static boolean absent(FileSystem fs, Path path) throws IOException {
        if ("file".equals(fs.getUri().getScheme())) {
            // notExists is true only when the OS said ENOENT; an unsearchable directory makes it false.
            java.nio.file.Path local = java.nio.file.Path.of(fs.makeQualified(path).toUri());
            return Files.notExists(local, LinkOption.NOFOLLOW_LINKS) && !Files.isSymbolicLink(local);
        }
        try {
            fs.getFileStatus(path);
            return false;
        } catch (FileNotFoundException e) {
            return true;
        }
    }
}
