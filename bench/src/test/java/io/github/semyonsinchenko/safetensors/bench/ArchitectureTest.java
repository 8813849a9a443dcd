package io.github.semyonsinchenko.safetensors.bench;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dependency rules of the layout in docs/development.md, checked on the compiled main classes of every module
 * of the repository (each {@code <module>/target/classes}, so modules added later are covered once
 * they are built; this module runs last in the reactor and depends on cli and spark so they are).
 */
class ArchitectureTest {
    static final String BASE = "io.github.semyonsinchenko.safetensors";
    static final Path ROOT = Path.of(System.getProperty("safetensors.repo.root", "..")).toAbsolutePath().normalize();

    static List<Path> moduleClassDirs;
    static JavaClasses classes;

    @BeforeAll
    static void importEveryModule() throws IOException {
        try (Stream<Path> dirs = Files.walk(ROOT, 4)) {
            moduleClassDirs = dirs.filter(d -> d.endsWith(Path.of("target", "classes")) && Files.isDirectory(d))
                    .filter(d -> Files.exists(d.getParent().getParent().resolve("pom.xml")))
                    .sorted()
                    .toList();
        }
        classes = new ClassFileImporter().importPaths(moduleClassDirs);
    }

    static DescribedPredicate<JavaClass> inModule(String module) {
        String marker = "/" + module + "/target/classes/";
        return DescribedPredicate.describe("in module " + module,
                c -> c.getSource().map(s -> s.getUri().toString().contains(marker)).orElse(false));
    }

    @Test
    void theImportSeesEveryModule() {
        for (String module : List.of("java/core", "java/loader", "java/sampler", "java/dataset", "java/cli", "spark",
                "spark/preprocess", "bench")) {
            assertTrue(classes.stream().anyMatch(inModule(module)),
                    "no compiled classes of " + module + " among " + moduleClassDirs);
        }
    }

    @Test
    void coreNeverSeesSparkHadoopOrPicocli() {
        noClasses().that(inModule("java/core"))
                .should().dependOnClassesThat().resideInAnyPackage("org.apache.spark..", "org.apache.hadoop..",
                        "scala..", "picocli..")
                .check(classes);
    }

    /**
     * The dataset format (manifest, names, commit protocol, retention, vacuum, MLflow source) is
     * Spark-free, so the CLI and plain JVM programs use it without a Spark class path: nothing in its
     * package, whichever module holds it, reaches Spark or Scala.
     */
    static ArchRule sparkFree(String packages) {
        return noClasses().that().resideInAPackage(packages)
                .should().dependOnClassesThat().resideInAnyPackage("org.apache.spark..", "scala..");
    }

    static final ArchRule DATASET_IS_SPARK_FREE = sparkFree(BASE + ".dataset..");

    @Test
    void theDatasetFormatNeverSeesSpark() {
        DATASET_IS_SPARK_FREE.check(classes);
        assertTrue(classes.stream().anyMatch(c -> c.getPackageName().startsWith(BASE + ".dataset")),
                "no class of the dataset package was imported");
    }

    static final ArchRule ONLY_KERNELS_LINK = noClasses().that().resideOutsideOfPackage(BASE + ".kernels..")
            .should().dependOnClassesThat().belongToAnyOf(Linker.class, SymbolLookup.class);

    @Test
    void onlyTheKernelsPackageTouchesTheNativeLinker() {
        ONLY_KERNELS_LINK.check(classes);
    }

    /**
     * The {@code spark} package itself (the registered DataSource) is a slice of its own next to
     * each subpackage, so "root imports read, read imports a root type" is a cycle too.
     */
    static final SliceAssignment SPARK_PACKAGES = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass c) {
            String root = BASE + ".spark";
            String p = c.getPackageName();
            if (p.equals(root)) {
                return SliceIdentifier.of("spark");
            }
            if (p.startsWith(root + ".")) {
                return SliceIdentifier.of("spark." + p.substring(root.length() + 1).split("\\.")[0]);
            }
            return SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "the spark package and each of its subpackages";
        }
    };

    @Test
    void sparkPackagesFormNoCycle() {
        slices().assignedFrom(SPARK_PACKAGES).should().beFreeOfCycles().check(classes);
    }

    /**
     * Names in files and messages are formatted with {@code Locale.ROOT}: the overloads that use
     * the JVM's default locale (Turkish dotless i, Arabic digits, comma decimals) are not called.
     */
    static final ArchRule ROOT_LOCALE_ONLY = noClasses().that().resideInAPackage(BASE + "..")
            .should().callMethod(String.class, "format", String.class, Object[].class)
            .orShould().callMethod(String.class, "formatted", Object[].class)
            .orShould().callMethod(String.class, "toLowerCase")
            .orShould().callMethod(String.class, "toUpperCase")
            .orShould().callMethod(PrintStream.class, "printf", String.class, Object[].class)
            .orShould().callMethod(PrintStream.class, "format", String.class, Object[].class)
            .orShould().callMethod(PrintWriter.class, "printf", String.class, Object[].class)
            .orShould().callMethod(PrintWriter.class, "format", String.class, Object[].class);

    @Test
    void nothingFormatsWithTheDefaultLocale() {
        ROOT_LOCALE_ONLY.check(classes);
    }

    /**
     * The format's byte order has one home, {@code format.LittleEndian}: nothing else builds its own
     * little-endian layouts (six classes once did, each with its own names).
     */
    static final ArchRule ONE_HOME_FOR_BYTE_ORDER = noClasses().that().resideInAPackage(BASE + "..")
            .and().doNotHaveFullyQualifiedName(BASE + ".format.LittleEndian")
            .should().callMethodWhere(DescribedPredicate.describe("ValueLayout.withOrder",
                    call -> call.getName().equals("withOrder")
                            && call.getTargetOwner().isAssignableTo(ValueLayout.class)));

    @Test
    void onlyLittleEndianSetsTheByteOrderOfALayout() {
        ONE_HOME_FOR_BYTE_ORDER.check(classes);
    }

    @Test
    void theRulesCatchWhatTheyForbid() {
        JavaClasses bad = new ClassFileImporter().importClasses(Offender.class);
        assertTrue(ONLY_KERNELS_LINK.evaluate(bad).hasViolation(), "Linker outside the kernels package");
        assertTrue(ONE_HOME_FOR_BYTE_ORDER.evaluate(bad).hasViolation(), "a layout's byte order set elsewhere");
        assertTrue(sparkFree(BASE + ".spark.read..").evaluate(classes).hasViolation(),
                "the Spark-free rule, asked of the connector's read package, finds its Spark imports");
        EvaluationResult locale = ROOT_LOCALE_ONLY.evaluate(bad);
        assertEquals(3, locale.getFailureReport().getDetails().size(), String.join("\n",
                locale.getFailureReport().getDetails()));
    }

    /**
     * Breaks the rules on purpose (test code, never run): a linker lookup, default-locale formatting
     * and a little-endian layout of its own.
     */
    static final class Offender {
        static final ValueLayout.OfInt OWN_LE_INT = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);

        Object link() {
            return Linker.nativeLinker().defaultLookup();
        }

        String names(String s) {
            return String.format("%d", 1) + s.toLowerCase() + "%s".formatted(s);
        }
    }
}
