package io.github.semyonsinchenko.safetensors.loader;

import java.util.List;
import java.util.Locale;

/**
 * The bytes of one file that some tensors (or their slices) need, read as one unit into one buffer
 * and handed out together: no tensor is split across chunks, so a tensor is handed out only when all
 * of its bytes have arrived. With whole tensors the chunk is one contiguous range; with slices or a
 * selection, the bytes are the merged runs the slices need ({@link PlannedTensor#parts()}), read in
 * requests that skip gaps larger than the plan's gap threshold.
 *
 * @param index position in the global plan; decides the owner rank
 * @param file the file's path
 * @param start absolute offset of the first byte read
 * @param end absolute offset one past the last byte read
 * @param tensors the tensors in storage order, none split
 * @param ranges the requests that read it, in offset order, each at most the plan's range limit;
 *     consecutive requests of one contiguous stretch follow each other in the buffer
 */
public record Chunk(int index, String file, long start, long end, List<PlannedTensor> tensors, List<Range> ranges) {
    /** Copies the lists. */
    public Chunk {
        tensors = List.copyOf(tensors);
        ranges = List.copyOf(ranges);
    }

    /**
     * One ranged request: {@code length} bytes from absolute offset {@code offset}, read to
     * {@code bufferOffset} of the chunk's buffer.
     *
     * @param offset absolute offset of the first byte in the file
     * @param length bytes requested
     * @param bufferOffset where they land in the chunk's buffer
     */
    public record Range(long offset, int length, long bufferOffset) {
        /** {@return one past the last byte} */
        public long end() {
            return offset + length;
        }
    }

    /** {@return bytes read, the size of the chunk's buffer: {@code end - start} unless requests skip gaps} */
    public long byteSize() {
        long sum = 0;
        for (Range r : ranges) {
            sum += r.length();
        }
        return sum;
    }

    /** {@return names the chunk for error messages: file, byte range and the tensors it holds} */
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
