package io.github.semyonsinchenko.safetensors.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.DocumentationTool;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Doclint ({@code -Xdoclint:all}, as the publish profile's javadoc jars run it) over the public API
 * of the library modules: none may have a warning or an error, so new public API comes with
 * complete javadoc. The map keeps a count per module so that a module not yet documented could be
 * admitted with its count, which may then only go down.
 */
class JavadocTest {
    /** Module folder -> doclint warnings allowed. */
    static final Map<String, Integer> ALLOWED = Map.of(
            "spark/entry", 0,
            "java/core", 0,
            "java/sampler", 0,
            "java/dataset", 0,
            "java/loader", 0,
            "spark", 0);

    static Stream<String> modules() {
        return ALLOWED.keySet().stream().sorted();
    }

    /** The repository root (the module's surefire configuration sets it). */
    static final Path ROOT = Path.of(System.getProperty("safetensors.repo.root", "..")).toAbsolutePath().normalize();

    private static List<Path> sources(String module) throws IOException {
        List<Path> roots = new ArrayList<>(List.of(ROOT.resolve(module).resolve("src/main/java")));
        Path java8 = ROOT.resolve(module).resolve("src/java8/java");
        if (Files.isDirectory(java8)) {
            roots.add(java8);
        }
        List<Path> files = new ArrayList<>();
        for (Path root : roots) {
            try (Stream<Path> walk = Files.walk(root)) {
                // The publish profile leaves out the one package-private class on the incubating Vector API.
                walk.filter(p -> p.toString().endsWith(".java") && !p.endsWith(Path.of("kernels", "VectorBackend.java")))
                        .forEach(files::add);
            }
        }
        return files;
    }

    @ParameterizedTest
    @MethodSource("modules")
    void noModuleHasMoreDoclintWarningsThanRecorded(String module, @TempDir Path out) throws IOException {
        DocumentationTool javadoc = ToolProvider.getSystemDocumentationTool();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        List<String> found = new ArrayList<>();
        try (StandardJavaFileManager files = javadoc.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
            List<String> options = List.of("-Xdoclint:all", "-Xmaxwarns", "100000", "-Xmaxerrs", "100000", "-quiet",
                    "-d", out.toString(), "-classpath", System.getProperty("java.class.path"));
            Boolean ok = javadoc.getTask(new StringWriter(), files, diagnostics, null, options,
                    files.getJavaFileObjectsFromPaths(sources(module))).call();
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                if (d.getKind() == Diagnostic.Kind.NOTE || d.getSource() == null) {
                    continue;
                }
                found.add(d.getKind() + " " + d.getSource().getName() + ":" + d.getLineNumber() + ": "
                        + d.getMessage(Locale.ROOT));
            }
            assertTrue(ok || !found.isEmpty(), module + ": javadoc failed without a diagnostic");
        }
        int allowed = ALLOWED.get(module);
        long errors = found.stream().filter(s -> s.startsWith("ERROR")).count();
        assertTrue(errors == 0, module + ": javadoc errors:\n" + String.join("\n", found));
        assertTrue(found.size() <= allowed, String.format(Locale.ROOT,
                "%s: %d doclint warnings, %d allowed (document the new public API):%n%s", module, found.size(),
                allowed, String.join("\n", found.subList(0, Math.min(found.size(), 200)))));
        if (found.size() < allowed) {
            System.out.printf(Locale.ROOT, "%s: %d doclint warnings; lower JavadocTest.ALLOWED from %d%n", module,
                    found.size(), allowed);
        }
    }
}
