package io.github.semyonsinchenko.safetensors.dataset;

import java.io.FileNotFoundException;
import java.io.IOException;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * The local file system as a user who may not read some files sees it: opening a file whose name
 * matches {@value #DENY} fails the way the JDK reports "permission denied" (a
 * {@code FileNotFoundException} with "(Permission denied)"), while the file is listed and its status
 * readable. Tests run as root here, who may read everything; this stands in for another owner.
 */
public class DenyingFileSystem extends RawLocalFileSystem {
    /** Configuration key: a regular expression for the file names to deny. */
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
