package io.github.semyonsinchenko.safetensors.io;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One-call loading and saving of named tensors, as Hugging Face's {@code safetensors} module
 * offers them ({@code load_file}, {@code save_file}, {@code load}, {@code save},
 * {@code deserialize}). Tensors go in and out as {@code Map<String, Tensor>}: loaded maps keep the
 * file's offset order; maps to save are laid out as the reference writer does (descending dtype
 * alignment, then name), so the bytes equal {@code safetensors.numpy.save_file}'s for the same
 * tensors and metadata.
 *
 * <pre>{@code
 * try (Arena arena = Arena.ofConfined()) {
 *     Map<String, Tensor> tensors = Safetensors.loadFile(Path.of("model.safetensors"), arena);
 *     float[] w = tensors.get("w").toFloatArray();
 * }
 * Safetensors.saveFile(Map.of("w", Tensor.of("w", new long[] {2, 2}, new float[] {1, 2, 3, 4})),
 *         Map.of("format", "pt"), Path.of("out.safetensors"));
 * byte[] bytes = Safetensors.save(tensors, Map.of());
 * Map<String, Tensor> back = Safetensors.load(bytes);                  // views of the array, no copy
 * }</pre>
 *
 * For reading without loading everything, open the file mapped ({@link SafetensorsFile#open}) or
 * parse memory in place ({@link SafetensorsBuffer#of}); for writing from other sources, use
 * {@link SafetensorsWriter}.
 */
public final class Safetensors {
    private static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

    private Safetensors() {
    }

    /**
     * Reads the whole file into memory owned by {@code arena}, validated, and returns its tensors
     * by name in offset order: {@code load_file}. Nothing stays open; the tensors live until
     * {@code arena} is closed. {@link SafetensorsBuffer#read} gives the metadata as well.
     *
     * @param path the file
     * @param arena owns the memory the file is read into
     * @return the tensors by name, in offset order
     * @throws io.github.semyonsinchenko.safetensors.format.SafetensorsException if the file breaks a format rule
     * @throws IOException if reading the file fails
     */
    public static Map<String, Tensor> loadFile(Path path, Arena arena) throws IOException {
        return SafetensorsBuffer.read(path, arena).asMap();
    }

    /**
     * Parses a whole safetensors file held in {@code bytes}, validated, and returns its tensors by
     * name in offset order: {@code load(bytes)}. The tensors are views of {@code bytes}, not copies.
     *
     * @param bytes a whole safetensors file
     * @return the tensors by name, in offset order
     * @throws io.github.semyonsinchenko.safetensors.format.SafetensorsException if the bytes break a format rule
     * @throws IOException never otherwise: the bytes are parsed in memory
     */
    public static Map<String, Tensor> load(byte[] bytes) throws IOException {
        return SafetensorsBuffer.of(bytes).asMap();
    }

    /**
     * Parses a safetensors image in place, with its metadata: {@code deserialize(bytes)}, Rust's
     * {@code SafeTensors::deserialize}. The segment is borrowed (see {@link SafetensorsBuffer}).
     *
     * @param image a whole safetensors file in memory
     * @return the parsed image
     * @throws io.github.semyonsinchenko.safetensors.format.SafetensorsException if the image breaks a format rule
     * @throws IOException never otherwise: the image is parsed in memory
     */
    public static SafetensorsBuffer deserialize(MemorySegment image) throws IOException {
        return SafetensorsBuffer.of(image, "<memory>");
    }

    /**
     * {@link #deserialize(MemorySegment)} of a byte array (not copied).
     *
     * @param image a whole safetensors file
     * @return the parsed image
     * @throws io.github.semyonsinchenko.safetensors.format.SafetensorsException if the image breaks a format rule
     * @throws IOException never otherwise: the image is parsed in memory
     */
    public static SafetensorsBuffer deserialize(byte[] image) throws IOException {
        return SafetensorsBuffer.of(image);
    }

    /**
     * {@link #saveFile(Map, Map, Path)} without metadata.
     *
     * @param tensors the tensors, each under its key
     * @param path the file to write
     * @throws IOException if writing fails, or the layout breaks a format rule
     */
    public static void saveFile(Map<String, Tensor> tensors, Path path) throws IOException {
        saveFile(tensors, Map.of(), path);
    }

    /**
     * Writes {@code tensors} (each under its key; the tensor's own name is not used) and
     * {@code metadata} to {@code path}, atomically (a temporary file renamed over it): {@code
     * save_file(tensors, path, metadata)}. Tensors may come from any file, buffer or {@link Tensor#of}.
     *
     * @param tensors the tensors, each under its key
     * @param metadata the {@code __metadata__} entries
     * @param path the file to write
     * @throws io.github.semyonsinchenko.safetensors.format.SafetensorsException if the layout breaks a
     *     format rule (e.g. a tensor named {@code __metadata__})
     * @throws IOException if a tensor cannot be read or writing the file fails
     */
    public static void saveFile(Map<String, Tensor> tensors, Map<String, String> metadata, Path path)
            throws IOException {
        writer(tensors, metadata).write(path);
    }

    /**
     * The bytes of a safetensors file holding {@code tensors} and {@code metadata}: {@code save} /
     * {@code serialize}. Under 2 GiB; {@link #saveFile} has no limit.
     *
     * @param tensors the tensors, each under its key
     * @param metadata the {@code __metadata__} entries
     * @return the file's bytes
     * @throws IllegalArgumentException if the file would be 2 GiB or more
     * @throws IOException if a tensor cannot be read, or the layout breaks a format rule
     */
    public static byte[] save(Map<String, Tensor> tensors, Map<String, String> metadata) throws IOException {
        SafetensorsWriter writer = writer(tensors, metadata);
        long size = writer.header().fileSize();
        if (size > MAX_ARRAY) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "the file would be %d bytes, more than a"
                    + " byte array holds; use saveFile", size));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream((int) size);
        writer.write(out);
        return out.toByteArray();
    }

    private static SafetensorsWriter writer(Map<String, Tensor> tensors, Map<String, String> metadata) {
        Objects.requireNonNull(tensors, "tensors");
        Objects.requireNonNull(metadata, "metadata");
        SafetensorsWriter writer = new SafetensorsWriter().metadata(metadata);
        tensors.forEach((name, t) -> writer.add(name, t.dtype(), t.shape(), t.data()));
        return writer;
    }
}
