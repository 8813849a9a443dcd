package io.github.semyonsinchenko.safetensors.cli;

import io.github.semyonsinchenko.safetensors.dataset.CommitPolicy;
import io.github.semyonsinchenko.safetensors.dataset.HadoopConfs;
import io.github.semyonsinchenko.safetensors.dataset.Vacuum;
import io.github.semyonsinchenko.safetensors.options.OptionException;
import io.github.semyonsinchenko.safetensors.options.Options;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.hadoop.fs.Path;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
        name = "vacuum",
        header = "Delete what a safetensors dataset no longer needs (a dry run unless --apply).",
        mixinStandardHelpOptions = true,
        description = {
            "Applies the dataset's retention (format/dataset.md, \"Retention and vacuum\") to the dataset at PATH"
                    + " (file://, hdfs://, s3a://... with the matching Hadoop connector on the class path): shards"
                    + " only versions older than the retained ones name, and files no committed version names (staging"
                    + " of crashed jobs, shards of failed commits, temporary files) once unmodified for --orphan-age.",
            "Every file a retained version names is kept. Without --apply it only lists what it would delete.",
            "A path without a committed dataset, or whose manifest cannot be read, is refused (exit 1)."
        })
final class VacuumCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "PATH", description = "The dataset root (the directory holding dataset_manifest.json).")
    String path;

    @Option(names = "--apply", description = "Delete; without it nothing is deleted.")
    boolean apply;

    @Option(names = "--retain-versions", paramLabel = "N", description = "Versions before the current one whose files"
            + " are kept (default: the write option's default, 1).")
    String retainVersions;

    @Option(names = "--orphan-age", paramLabel = "DURATION", description = "How long a file no committed version names"
            + " must be unmodified before it is deleted: 90s, 30m, 12h, 7d (default: 1d).")
    String orphanAge;

    @Option(names = "--conf", paramLabel = "KEY=VALUE", description = "A Hadoop setting, e.g."
            + " fs.s3a.endpoint=http://127.0.0.1:9000 (repeatable).")
    Map<String, String> conf = Map.of();

    @Override
    public Integer call() throws IOException {
        Map<String, String> policyOptions = new HashMap<>();
        if (retainVersions != null) {
            policyOptions.put(CommitPolicy.RETAIN_VERSIONS, retainVersions);
        }
        if (orphanAge != null) {
            policyOptions.put(CommitPolicy.ORPHAN_AGE, orphanAge);
        }
        CommitPolicy policy;
        try {
            policy = CommitPolicy.parse(Options.of("vacuum", policyOptions));
        } catch (OptionException e) { // in picocli's words, naming the flag the value came from
            throw new CommandLine.ParameterException(spec.commandLine(), String.format(Locale.ROOT,
                    "Invalid value for option '--%s': '%s'; allowed: %s", e.option().replace('_', '-'), e.value(),
                    e.allowed()));
        }
        Vacuum.Report report = Vacuum.run(HadoopConfs.of(conf), new Path(path), policy, !apply);
        PrintWriter out = spec.commandLine().getOut();
        out.print(report);
        if (!apply) {
            out.println("dry run: nothing deleted; add --apply to delete");
        }
        out.flush();
        return SafetensorsCli.EXIT_OK;
    }
}
