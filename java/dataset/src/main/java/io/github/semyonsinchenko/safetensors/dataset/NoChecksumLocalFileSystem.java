package io.github.semyonsinchenko.safetensors.dataset;

import org.apache.hadoop.fs.LocalFileSystem;

/**
 * The local file system without {@code .crc} side files: Hadoop's {@link LocalFileSystem} with
 * checksums neither written nor verified. Not the raw file system itself: Hadoop code that asks for
 * "the local file system" (S3A's disk buffers, through {@code FileSystem.getLocal}) casts it to
 * {@link LocalFileSystem}, and a raw one there fails every S3A write with a {@code ClassCastException}.
 * Set for {@code file:} by {@link HadoopConfs}.
 */
public class NoChecksumLocalFileSystem extends LocalFileSystem {
    /** The file system; Hadoop creates it by reflection and then initializes it. */
    public NoChecksumLocalFileSystem() {
        super();
    }

    @Override
    public void initialize(java.net.URI name, org.apache.hadoop.conf.Configuration conf) throws java.io.IOException {
        super.initialize(name, conf);
        setWriteChecksum(false);
        setVerifyChecksum(false);
    }
}
