package io.github.semyonsinchenko.safetensors.io;

import io.github.semyonsinchenko.safetensors.format.Header;
import io.github.semyonsinchenko.safetensors.format.TensorInfo;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * The tensors of one validated image, in offset order and by name: what a mapped file
 * ({@link SafetensorsFile}) and an image in memory ({@link SafetensorsBuffer}) both hand out.
 * Immutable; the open/closed state stays with its holder.
 */
final class TensorTable {
    private final String source;
    private final String holder;
    private final List<Tensor> tensors;
    private final Map<String, Tensor> byName;

    /**
     * Views every tensor of {@code header} in {@code image}.
     *
     * @param owner answers for the tensors' memory (open state, fault translation)
     * @param header the validated header of {@code image}
     * @param image the whole file's bytes
     * @param source names the image in messages
     * @param holder what holds the tensors, for messages ("file", "image")
     */
    TensorTable(TensorOwner owner, Header header, MemorySegment image, String source, String holder) {
        this.source = source;
        this.holder = holder;
        MemorySegment data = image.asSlice(header.dataOffset(), header.dataSize());
        List<Tensor> list = new ArrayList<>(header.size());
        Map<String, Tensor> index = LinkedHashMap.newLinkedHashMap(header.size());
        for (TensorInfo info : header.tensors()) {
            Tensor t = new Tensor(owner, info, data.asSlice(info.begin(), info.byteSize()));
            list.add(t);
            index.put(info.name(), t);
        }
        this.tensors = Collections.unmodifiableList(list);
        this.byName = Collections.unmodifiableMap(index);
    }

    /** {@return the tensors in offset order (unmodifiable)} */
    List<Tensor> list() {
        return tensors;
    }

    /** {@return the tensors by name, in offset order (unmodifiable)} */
    Map<String, Tensor> byName() {
        return byName;
    }

    /** {@return the number of tensors} */
    int size() {
        return tensors.size();
    }

    /** {@return whether a tensor is called {@code name}} */
    boolean contains(String name) {
        return byName.containsKey(name);
    }

    /** The tensor called {@code name}; a {@link NoSuchElementException} naming the source if none is. */
    Tensor get(String name) {
        Tensor t = byName.get(name);
        if (t == null) {
            throw new NoSuchElementException(source + ": no tensor \"" + name + "\" (the " + holder + " has "
                    + tensors.size() + " tensors)");
        }
        return t;
    }
}
