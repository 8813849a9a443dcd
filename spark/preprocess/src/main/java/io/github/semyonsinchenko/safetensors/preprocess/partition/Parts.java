package io.github.semyonsinchenko.safetensors.preprocess.partition;

import io.github.semyonsinchenko.safetensors.sampler.db.SectionWriter;
import java.io.Closeable;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Writing a file from ordered Spark partitions without collecting it: each partition writes its
 * piece of every section to its own part file ({@link Out}, through the sampler format's
 * {@link SectionWriter}); the driver then appends the pieces in partition order to the database
 * file ({@link SectionWriter#appendSection}). Bitmaps are joined bit by bit, so partitions may hold
 * any number of rows.
 */
public final class Parts {
    private Parts() {}

    /** What a partition wrote: its index and its row count. */
    public record Info(int partition, long rows) implements Serializable {}

    /** The part file of {@code section} written by {@code partition} in {@code dir}. */
    public static Path partFile(Path dir, int section, int partition) {
        return dir.resolve(String.format(Locale.ROOT, "s%03d-p%06d", section, partition));
    }

    /** The infos sorted by partition, the order parts are concatenated in. */
    public static List<Info> inOrder(List<Info> infos) {
        List<Info> s = new ArrayList<>(infos);
        s.sort(Comparator.comparingInt(Info::partition));
        return s;
    }

    /** The part files of {@code section} of the partitions {@code ordered}, in that order. */
    public static List<Path> files(Path dir, int section, List<Info> ordered) {
        return ordered.stream().map(i -> partFile(dir, section, i.partition())).toList();
    }

    /** The row counts of the partitions {@code ordered}, in that order. */
    public static long[] rows(List<Info> ordered) {
        return ordered.stream().mapToLong(Info::rows).toArray();
    }

    /**
     * The sections of one partition; each is written to a temporary name and renamed on
     * {@link #commit}, so a retried or speculative attempt never leaves half a part behind.
     */
    public static final class Out implements Closeable {
        private final Path dir;
        private final int partition;
        private final String attempt;
        private final SectionWriter[] sections;

        /** The {@code sectionCount} sections of {@code partition}, written in {@code dir}. */
        public Out(String dir, int partition, int sectionCount) {
            this.dir = Path.of(dir);
            this.partition = partition;
            this.attempt = Long.toHexString(Double.doubleToLongBits(Math.random()));
            this.sections = new SectionWriter[sectionCount];
            try {
                Files.createDirectories(this.dir);
                for (int s = 0; s < sectionCount; s++) {
                    sections[s] = SectionWriter.create(temp(s));
                }
            } catch (IOException e) {
                close();
                throw new UncheckedIOException(e);
            }
        }

        private Path temp(int section) {
            return dir.resolve(partFile(dir, section, partition).getFileName() + "." + attempt + ".tmp");
        }

        /** The writer of section {@code s}. */
        public SectionWriter section(int s) {
            return sections[s];
        }

        /** Finishes every section under its final name; the partition wrote {@code rows} rows. */
        public Info commit(long rows) {
            try {
                for (int s = 0; s < sections.length; s++) {
                    sections[s].finish();
                    Files.move(temp(s), partFile(dir, s, partition), StandardCopyOption.REPLACE_EXISTING,
                            StandardCopyOption.ATOMIC_MOVE);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return new Info(partition, rows);
        }

        @Override
        public void close() {
            for (int s = 0; s < sections.length; s++) {
                if (sections[s] != null) {
                    try {
                        sections[s].close();
                        Files.deleteIfExists(temp(s));
                    } catch (IOException ignored) {
                        // best effort: the whole parts directory is deleted at the end
                    }
                }
            }
        }
    }
}
