package io.github.semyonsinchenko.safetensors.sampler.db;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;

/**
 * Reads and writes {@code metadata.json} (spec §3). Reading ({@link MetadataJsonReader}) ignores
 * unknown keys, accepts absent nullable indices, and reads a {@code null} f64 as NaN (the reference
 * writes non-finite values that way but cannot read them back). Writing
 * ({@link MetadataJsonWriter}) produces the reference's key order with a two-space indent.
 */
public final class MetadataJson {
    private MetadataJson() {}

    /**
     * Parses {@code metadata.json}.
     *
     * @param json the file's bytes, UTF-8
     * @param file the source, named in errors
     * @return the metadata (not yet {@linkplain DatabaseMetadata#validate validated})
     * @throws SamplerDatabaseException if the JSON is malformed or a key is missing or mistyped
     */
    public static DatabaseMetadata parse(byte[] json, Path file) throws SamplerDatabaseException {
        return MetadataJsonReader.parse(json, file);
    }

    /**
     * Serializes {@code m} as the reference does (key order, two-space indent, one element per line).
     *
     * @param m the metadata
     * @return the file's bytes, UTF-8
     */
    public static byte[] toBytes(DatabaseMetadata m) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            write(m, out);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e); // a byte array cannot fail
        }
        return out.toByteArray();
    }

    /**
     * Writes {@code m} as {@link #toBytes} does.
     *
     * @param m the metadata
     * @param out the stream written to; left open
     * @throws IOException if writing fails
     */
    public static void write(DatabaseMetadata m, OutputStream out) throws IOException {
        MetadataJsonWriter.write(m, out);
    }
}
