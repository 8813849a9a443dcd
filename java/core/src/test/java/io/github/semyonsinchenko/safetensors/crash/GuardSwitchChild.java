package io.github.semyonsinchenko.safetensors.crash;

import io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException;
import io.github.semyonsinchenko.safetensors.mmap.MappedFile;
import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Child JVM: switches the native fault guard off at run time ({@link Kernels#nativeFaultGuard}),
 * and back on when argv[1] is "on-again", then gathers a row from a mapped file truncated under
 * it. On again: the gather throws {@link MappedFileFaultException} and the child exits 0. Off: the
 * fault must end the JVM (SIGBUS), as without the guard, which is what a benchmark of the guard's
 * cost needs the switch to do. argv: the directory to work in, "off" or "on-again".
 */
public final class GuardSwitchChild {
    private static final int ROWS = 2048;
    private static final int ROW_BYTES = 512;

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]).resolve("table.bin");
        Files.write(file, new byte[ROWS * ROW_BYTES]);
        try (MappedFile mapped = MappedFile.open(file); Arena arena = Arena.ofConfined()) {
            try (FileChannel other = FileChannel.open(file, StandardOpenOption.WRITE)) {
                other.truncate(4096);
            }
            MemorySegment out = arena.allocate(ROW_BYTES, 64);
            System.out.println("active at start: " + Kernels.nativeFaultGuardActive());
            System.out.println("switched off: " + !Kernels.nativeFaultGuard(false) + ", active: "
                    + Kernels.nativeFaultGuardActive());
            if (args[1].equals("on-again")) {
                System.out.println("switched on: " + Kernels.nativeFaultGuard(true));
            }
            System.out.flush();
            try {
                Kernels.gather(mapped.segment(), ROW_BYTES, new long[] {ROWS - 1}, 0, 1, out);
                System.out.println("NO FAULT");
                System.exit(2);
            } catch (MappedFileFaultException e) {
                System.out.println("caught: " + e.getMessage());
                System.exit(args[1].equals("on-again") ? 0 : 3);
            }
        }
    }
}
