package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import io.github.semyonsinchenko.safetensors.options.OptionException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code safetensors} command. Exit codes: {@value #EXIT_OK} success, {@value #EXIT_INVALID}
 * an invalid or unreadable file (the message names it), {@value #EXIT_USAGE} a usage error.
 */
@Command(
        name = "safetensors",
        mixinStandardHelpOptions = true,
        versionProvider = SafetensorsCli.Version.class,
        description = "Reads, checks and writes safetensors files with safetensors-jvm.",
        subcommands = {
            InspectCommand.class,
            VerifyCommand.class,
            ExportCommand.class,
            PackCommand.class,
            ConvertCommand.class,
            SliceCommand.class,
            LoadCommand.class,
            VacuumCommand.class,
            DemoCommand.class,
            SamplerCommand.class,
            CommandLine.HelpCommand.class
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success",
            "1:an invalid or unreadable file (the message names it)",
            "2:usage error",
            "3:the JVM is older than JDK 25 (checked by the jar's launcher)"
        })
public final class SafetensorsCli implements Runnable {
    public static final int EXIT_OK = 0;
    public static final int EXIT_INVALID = 1;
    public static final int EXIT_USAGE = 2;

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        System.exit(newCommandLine().execute(args));
    }

    /** The configured command line; tests call {@code execute} on it with their own writers. */
    public static CommandLine newCommandLine() {
        CommandLine cl = new CommandLine(new SafetensorsCli());
        cl.setExecutionExceptionHandler(SafetensorsCli::handleExecutionException);
        return cl;
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: choose one of "
                + String.join(", ", spec.subcommands().keySet()));
    }

    /**
     * I/O problems (including format violations) are the user's file: one line, exit 1, no stack
     * trace. A setting core's option parser refused (a {@code safetensors.loader.*} property, say)
     * is a usage error like a bad flag: its message, exit 2.
     */
    private static int handleExecutionException(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
        PrintWriter err = cl.getErr();
        if (e instanceof OptionException o) {
            err.println("error: " + o.getMessage());
            err.flush();
            return EXIT_USAGE;
        }
        IOException io = e instanceof IOException i ? i
                : e instanceof UncheckedIOException u ? u.getCause() : null;
        if (io != null) {
            err.println("error: " + describe(io));
        } else {
            // Not the user's input: a bug worth a stack trace.
            err.println("internal error in '" + cl.getCommandName() + "':");
            e.printStackTrace(err);
        }
        err.flush();
        return EXIT_INVALID;
    }

    /** An I/O error as one line that names the file; the JDK's messages for these are just the path. */
    static String describe(IOException e) {
        return switch (e) {
            case NoSuchFileException n -> n.getFile() + ": no such file or directory";
            case AccessDeniedException a -> a.getFile() + ": permission denied";
            case FileAlreadyExistsException f -> f.getFile() + ": already exists";
            case NotDirectoryException d -> d.getFile() + ": not a directory";
            default -> e.getMessage() == null ? e.toString() : e.getMessage();
        };
    }

    /**
     * {@code --version}: the jar's version (from its manifest), the native library with its version
     * and ISA (or why it is not loaded), the kernel path in use, and the JDK.
     */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = SafetensorsCli.class.getPackage().getImplementationVersion();
            String nativeLine = Kernels.nativeVersion()
                    .map(nv -> Format.fmt("libsafetensors_native %s, ISA %s", nv, Kernels.nativeIsa().orElse("?")))
                    .orElseGet(() -> "not loaded (" + Kernels.nativeUnavailableReason().orElse("unknown") + ")");
            return new String[] {
                "safetensors-cli " + (v == null ? "(development build)" : v),
                "native kernels: " + nativeLine,
                "kernel path: " + Kernels.description(),
                Format.fmt("JDK: %s (%s, %s)", System.getProperty("java.version"), System.getProperty("java.vendor"),
                        System.getProperty("java.home")),
            };
        }
    }
}
