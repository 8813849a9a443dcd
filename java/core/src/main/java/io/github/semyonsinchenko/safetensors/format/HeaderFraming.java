package io.github.semyonsinchenko.safetensors.format;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SeekableByteChannel;
import java.util.Arrays;

/**
 * Reads a header off the front of a file: the 8-byte little-endian length N, then N bytes, then
 * hands them to the parser. Only 8 + N bytes are ever read. The prefix and sizes are checked in one
 * place ({@link #headerLength}) whichever input the bytes come from: a channel, a stream, or any
 * input with positioned reads (e.g. Hadoop's {@code FSDataInputStream}).
 */
public final class HeaderFraming {
    private HeaderFraming() {}

    /** An input that can fill a buffer from a given position (e.g. {@code FSDataInputStream::readFully}). */
    @FunctionalInterface
    public interface PositionedInput {
        /**
         * Fills all of {@code buffer} with the bytes starting at {@code position}.
         *
         * @param position the file offset of the first byte
         * @param buffer the array to fill completely
         * @throws IOException if the bytes cannot be read, e.g. an {@code EOFException} past the end
         */
        void readFully(long position, byte[] buffer) throws IOException;
    }

    /**
     * Reads and validates only the header (8 + N bytes) of a channel positioned anywhere; the
     * channel's size is the file size. The channel's position is left after the header.
     *
     * @param channel the file
     * @param source names the file in error messages
     * @return the validated header
     * @throws SafetensorsException if the header breaks a format rule
     * @throws IOException if reading the channel fails
     */
    public static Header read(SeekableByteChannel channel, String source) throws IOException {
        long fileSize = channel.size();
        channel.position(0);
        ByteBuffer prefix = ByteBuffer.allocate(Header.PREFIX_BYTES);
        if (readFully(channel, prefix) < Header.PREFIX_BYTES) {
            throw truncatedPrefix("the file has only " + fileSize + " bytes", source);
        }
        int n = headerLength(prefix.array(), fileSize, source);
        ByteBuffer header = ByteBuffer.allocate(n);
        if (readFully(channel, header) < n) {
            throw new SafetensorsException(Violation.HEADER_PAST_EOF, source, null,
                    "the channel ended before the " + n + " header bytes");
        }
        return HeaderParser.parse(header.array(), fileSize, source);
    }

    /**
     * Reads and validates only the header (8 + N bytes) from a stream; nothing past the header is
     * consumed.
     *
     * @param in the stream, positioned at the file's start
     * @param fileSize the total size if known (enables the end-of-file rules), else -1
     * @param source names the stream in error messages
     * @return the validated header
     * @throws SafetensorsException if the header breaks a format rule
     * @throws IOException if reading the stream fails
     */
    public static Header read(InputStream in, long fileSize, String source) throws IOException {
        byte[] prefix = in.readNBytes(Header.PREFIX_BYTES);
        if (prefix.length < Header.PREFIX_BYTES) {
            throw truncatedPrefix("the stream has only " + prefix.length + " bytes", source);
        }
        int n = headerLength(prefix, fileSize, source);
        // readNBytes grows its buffer as data arrives, so a lying N on a short stream costs little.
        byte[] header = in.readNBytes(n);
        if (header.length < n) {
            throw new SafetensorsException(Violation.HEADER_PAST_EOF, source, null,
                    "the stream ended after " + header.length + " of " + n + " header bytes");
        }
        return HeaderParser.parse(header, fileSize, source);
    }

    /**
     * Reads and validates only the header with two positioned reads (prefix, then N bytes) of a file
     * of {@code fileSize} bytes; N is checked against the size before the second read.
     *
     * @param in the file's positioned reads
     * @param fileSize the file's size, which positioned inputs always know (e.g. from a FileStatus)
     * @param source names the file in error messages
     * @return the validated header
     * @throws SafetensorsException if the header breaks a format rule
     * @throws IOException if a read fails
     * @throws IllegalArgumentException if {@code fileSize} is negative
     */
    public static Header read(PositionedInput in, long fileSize, String source) throws IOException {
        return read(in, fileSize, Header.PREFIX_BYTES, source);
    }

    /**
     * Reads and validates only the header of a file of {@code fileSize} bytes, first reading up to
     * {@code firstReadBytes} from its start (a guess that usually covers the whole header, for stores
     * that charge per request), then, only when N says the header goes on, exactly its remaining
     * bytes. N is checked against the size before the second read.
     *
     * @param in the file's positioned reads
     * @param fileSize the file's size, which positioned inputs always know (e.g. from a FileStatus)
     * @param firstReadBytes bytes of the first read; raised to the prefix's 8 and capped at the file
     * @param source names the file in error messages
     * @return the validated header
     * @throws SafetensorsException if the header breaks a format rule
     * @throws IOException if a read fails
     * @throws IllegalArgumentException if {@code fileSize} is negative
     */
    public static Header read(PositionedInput in, long fileSize, int firstReadBytes, String source)
            throws IOException {
        if (fileSize < 0) {
            throw new IllegalArgumentException(source + ": positioned reads need the file size, got " + fileSize);
        }
        if (fileSize < Header.PREFIX_BYTES) {
            throw truncatedPrefix("the file has only " + fileSize + " bytes", source);
        }
        byte[] first = new byte[(int) Math.min(fileSize, Math.max(Header.PREFIX_BYTES, firstReadBytes))];
        in.readFully(0, first);
        int n = headerLength(first, fileSize, source);
        int have = Math.min(n, first.length - Header.PREFIX_BYTES);
        byte[] header = Arrays.copyOfRange(first, Header.PREFIX_BYTES, Header.PREFIX_BYTES + n);
        if (have < n) {
            byte[] rest = new byte[n - have];
            in.readFully(first.length, rest);
            System.arraycopy(rest, 0, header, have, rest.length);
        }
        return HeaderParser.parse(header, fileSize, source);
    }

    /**
     * The one check of the prefix (the first 8 bytes of {@code prefix}): N, read unsigned, within the
     * limit and (when known) the file.
     */
    static int headerLength(byte[] prefix, long fileSize, String source) throws SafetensorsException {
        long n = ByteBuffer.wrap(prefix).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
        HeaderRules.checkPrefix(n, fileSize, source);
        return (int) n;
    }

    private static SafetensorsException truncatedPrefix(String detail, String source) {
        return new SafetensorsException(Violation.HEADER_LENGTH_TRUNCATED, source, null, detail);
    }

    private static int readFully(SeekableByteChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                break;
            }
        }
        return buffer.position();
    }
}
