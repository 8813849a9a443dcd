package io.github.semyonsinchenko.safetensors.sampler;

import io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Run by {@link TruncatedDatabaseTest} in a child JVM: for each database file named, samples from a
 * fresh copy of the fixture database, truncates that file under the running sampler and reports,
 * one line per file, what the consumer got. A crash (SIGBUS) kills this JVM instead of the test
 * runner.
 *
 * <p>Arguments: a work directory, {@code sampler} (the producer threads of {@link Sampler}) or
 * {@code stream} (a {@link BatchBuilder.Stream} on the calling thread, as {@code sampler bench}),
 * the threads per batch, the new length ({@code 0} or {@code half}), then the files relative to
 * the database directory.
 */
public final class TruncatedDatabaseChild {
    private TruncatedDatabaseChild() {}

    public static void main(String[] args) throws Exception {
        Path work = Path.of(args[0]);
        String mode = args[1];
        int threads = Integer.parseInt(args[2]);
        String length = args[3];
        for (int i = 4; i < args.length; i++) {
            String file = args[i];
            Path db = Fixtures.copyDb(work.resolve("round" + i));
            Throwable got = mode.equals("sampler") ? underSampler(db, file, threads, length)
                    : underStream(db, file, threads, length);
            System.out.println(report(file, got));
        }
        System.out.println("CHILD DONE");
    }

    private static SamplerConfig config(int threads) {
        return SamplerConfig.builder().batchSize(4).sequenceLength(256).maxRowsPerSeq(64).threads(threads)
                .numPrefetch(0).build();
    }

    private static void truncate(Path db, String file, String length) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(db.resolve(file).toFile(), "rw")) {
            f.setLength(length.equals("half") ? f.length() / 2 : 0);
        }
    }

    private static Throwable underSampler(Path db, String file, int threads, String length) throws Exception {
        try (Sampler sampler = Sampler.open(db, config(threads))) {
            for (int i = 0; i < 20; i++) {
                sampler.nextTrain().close();
            }
            truncate(db, file, length);
            for (int i = 0; i < 30; i++) {
                try {
                    sampler.nextTrain().close();
                } catch (SamplerException e) {
                    return e;
                }
            }
        }
        return null;
    }

    private static Throwable underStream(Path db, String file, int threads, String length) throws Exception {
        try (var d = io.github.semyonsinchenko.safetensors.sampler.db.Database.open(db);
                BatchBuilder builder = new BatchBuilder(d, config(threads))) {
            BatchBuilder.Stream stream = builder.stream(Split.TRAIN);
            for (int i = 0; i < 20; i++) {
                stream.next().close();
            }
            truncate(db, file, length);
            for (int i = 0; i < 30; i++) {
                try {
                    stream.next().close();
                } catch (RuntimeException | InternalError e) {
                    return e;
                }
            }
        }
        return null;
    }

    /** {@code FILE <file> GOT <class> CAUSE <class> SOURCE <source> MESSAGE <message>}. */
    private static String report(String file, Throwable got) {
        if (got == null) {
            return "FILE " + file + " GOT nothing";
        }
        Throwable cause = got.getCause();
        MappedFileFaultException typed = got instanceof MappedFileFaultException m ? m
                : cause instanceof MappedFileFaultException m ? m : null;
        return String.format(Locale.ROOT, "FILE %s GOT %s CAUSE %s SOURCE %s MESSAGE %s", file,
                got.getClass().getSimpleName(), cause == null ? "-" : cause.getClass().getSimpleName(),
                typed == null ? "-" : typed.source(), got.getMessage());
    }
}
