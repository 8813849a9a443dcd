package io.github.semyonsinchenko.safetensors.loader;

import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * Two files of one load hold a tensor of the same name (a directory or glob that takes in two
 * copies, or two checkpoints): the loader would hand out both under one name, and which one a
 * consumer keeps would depend on the order. {@link SafetensorsLoader#open} throws it after the
 * metadata pass, before any tensor byte is read; the message names the tensor and both files. Load
 * one of the files, or name the files one by one.
 */
public final class TensorInTwoFilesException extends IOException {
    private static final long serialVersionUID = 1L;

    private final String tensor;
    private final String first;
    private final String second;

    TensorInTwoFilesException(String tensor, String first, String second) {
        super("tensor \"" + tensor + "\" is in " + first + " and in " + second
                + ": a load hands out each name once; load one of the files");
        this.tensor = Objects.requireNonNull(tensor, "tensor");
        this.first = Objects.requireNonNull(first, "first");
        this.second = Objects.requireNonNull(second, "second");
    }

    /** {@return the tensor's name} */
    public String tensor() {
        return tensor;
    }

    /** {@return the two files holding it (full paths), in the order the load found them} */
    public List<String> files() {
        return List.of(first, second);
    }
}
