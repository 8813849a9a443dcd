package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.io.SafetensorsFile;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "verify",
        header = "Validate files: print OK or the broken rule for each.",
        mixinStandardHelpOptions = true,
        description = {
            "Opens each file as a reader would (header validation, offsets, file size, memory mapping) and"
                    + " prints 'OK <file>' or 'FAIL <file>: <the broken rule>' for each.",
            "Exits 1 if any file failed."
        })
final class VerifyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "FILE", arity = "1..*", description = "The .safetensors files.")
    List<Path> files;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        int failed = 0;
        for (Path file : files) {
            try (SafetensorsFile f = SafetensorsFile.open(file)) {
                out.println("OK " + f.path());
            } catch (IOException e) {
                failed++;
                String message = SafetensorsCli.describe(e);
                // Format violations already start with the file name; other I/O errors may not.
                out.println("FAIL " + (message.startsWith(file.toString()) ? message : file + ": " + message));
            }
            out.flush();
        }
        if (files.size() > 1) {
            out.println((files.size() - failed) + " of " + files.size() + " files OK");
        }
        out.flush();
        return failed == 0 ? SafetensorsCli.EXIT_OK : SafetensorsCli.EXIT_INVALID;
    }
}
