package io.github.semyonsinchenko.safetensors.sampler;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.stream.Stream;

/** The headwater-tiny fixture (see its README) and copies of it that tests may damage. */
public final class Fixtures {
    private Fixtures() {}

    /** {@code headwater-tiny/expected} in the test resources. */
    public static Path expected() {
        try {
            return Path.of(Fixtures.class.getResource("/headwater-tiny/expected").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The database directory headwater wrote. */
    public static Path db() {
        return expected().resolve("db");
    }

    /** A writable copy of the fixture database under {@code dir}. */
    public static Path copyDb(Path dir) {
        Path src = db();
        Path dst = dir.resolve("db");
        try (Stream<Path> walk = Files.walk(src)) {
            for (Path p : (Iterable<Path>) walk::iterator) {
                Path target = dst.resolve(src.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
                    target.toFile().setWritable(true);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return dst;
    }
}
