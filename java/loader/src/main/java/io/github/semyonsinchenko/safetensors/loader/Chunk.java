package io.github.semyonsinchenko.safetensors.loader;

import java.util.List;
import java.util.Locale;

/**
 * A contiguous byte range of one file holding whole tensors, read as one unit (one request, or a
 * few when {@link #ranges()} has more than one entry).
 *
 * @param index position in the global plan; decides the owner rank
 * @param file the file's path
 * @param start absolute offset of the first byte
 * @param end absolute offset one past the last byte
 * @param tensors the tensors in storage order, none split
 * @param ranges the requests that read it: consecutive, each at most the plan's range limit, together
 *     exactly {@code [start, end)}
 */
public record Chunk(int index, String file, long start, long end, List<PlannedTensor> tensors, List<Range> ranges) {
    public Chunk {
        tensors = List.copyOf(tensors);
        ranges = List.copyOf(ranges);
    }

    /** One ranged request: {@code length} bytes from absolute offset {@code offset}. */
    public record Range(long offset, int length) {
        public long end() {
            return offset + length;
        }
    }

    public long byteSize() {
        return end - start;
    }

    /** Names the chunk for error messages: file, byte range and the tensors it holds. */
    public String describe() {
        StringBuilder names = new StringBuilder();
        int shown = Math.min(tensors.size(), 8);
        for (int i = 0; i < shown; i++) {
            names.append(i == 0 ? "" : ", ").append(tensors.get(i).name());
        }
        if (shown < tensors.size()) {
            names.append(String.format(Locale.ROOT, ", ... (%d tensors)", tensors.size()));
        }
        return String.format(Locale.ROOT, "%s bytes [%d, %d) holding [%s]", file, start, end, names);
    }
}
