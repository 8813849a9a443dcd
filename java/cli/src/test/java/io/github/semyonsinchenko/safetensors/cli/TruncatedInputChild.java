package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.format.Dtype;
import io.github.semyonsinchenko.safetensors.io.SafetensorsWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * Child JVM: {@code convert} of a BF16 file that another handle truncates as soon as the output's
 * temporary file appears, i.e. while the command reads the mapped input. The command must fail
 * with exit code 1 and a message naming the input, and leave no temporary file. Prints the
 * verdict; exits 0 when all held. argv: the directory to work in.
 */
public final class TruncatedInputChild {
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Path in = dir.resolve("in.safetensors");
        Path out = dir.resolve("out.safetensors");
        long elems = 32L << 20; // 64 MiB of BF16
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(elems * 2);
            data.fill((byte) 0x3F);
            new SafetensorsWriter().add("weight", Dtype.BF16, new long[] {elems}, data).write(in);
        }
        long keep = 4096;
        AtomicBoolean truncated = new AtomicBoolean();
        Thread watcher = new Thread(() -> {
            try {
                while (!truncated.get()) {
                    try (Stream<Path> s = Files.list(dir)) {
                        if (s.anyMatch(p -> p.getFileName().toString().endsWith(".tmp"))) {
                            try (FileChannel ch = FileChannel.open(in, StandardOpenOption.WRITE)) {
                                ch.truncate(keep);
                            }
                            truncated.set(true);
                        }
                    }
                    Thread.onSpinWait();
                }
            } catch (Exception e) {
                e.printStackTrace(System.out);
            }
        });
        watcher.setDaemon(true);
        watcher.start();
        StringWriter err = new StringWriter();
        int code = SafetensorsCli.newCommandLine().setErr(new PrintWriter(err)).setOut(new PrintWriter(new StringWriter()))
                .execute("convert", in.toString(), out.toString(), "--to", "F32");
        List<String> left;
        try (Stream<Path> s = Files.list(dir)) {
            left = s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp")).toList();
        }
        System.out.println("exit code " + code + ", truncated " + truncated.get() + ", stderr: " + err);
        System.out.println("temporary files left: " + left + ", output exists: " + Files.exists(out));
        boolean ok = truncated.get() && code == SafetensorsCli.EXIT_INVALID && err.toString().contains(in.toString())
                && err.toString().contains("truncated") && left.isEmpty() && !Files.exists(out);
        System.out.println(ok ? "CLEAN FAILURE" : truncated.get() ? "NOT CLEAN" : "RACE LOST");
        System.exit(ok ? 0 : truncated.get() ? 1 : 3);
    }
}
