package io.github.semyonsinchenko.safetensors.spark.read;

import java.io.FileNotFoundException;
import java.io.IOException;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * The local file system as another user sees it: opening a file whose name matches the setting
 * {@value #DENY} fails the way the JDK reports "permission denied" on Linux (a
 * {@code FileNotFoundException} ending in "(Permission denied)"), while listing and status work. The
 * tests run as root, who may read everything; a read option sets it for one read or write:
 * {@code .option("fs.file.impl", DenyingLocalFileSystem.class.getName()).option(DENY, regex)}.
 */
public class DenyingLocalFileSystem extends RawLocalFileSystem {
    public static final String DENY = "test.deny.read";

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        String deny = getConf().get(DENY);
        if (deny != null && f.getName().matches(deny)) {
            throw new FileNotFoundException(pathToFile(f) + " (Permission denied)");
        }
        return super.open(f, bufferSize);
    }
}
