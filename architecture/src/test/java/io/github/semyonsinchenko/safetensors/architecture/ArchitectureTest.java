package io.github.semyonsinchenko.safetensors.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static java.util.Map.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.net.URI;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The map of ARCHITECTURE.md, checked on the compiled main classes ({@code <module>/target/classes})
 * of every module the parent pom lists: which module may use which, the layers inside core, and the
 * mechanisms that have one home. Each rule here is a row marked ✓ on that page; a rule the page
 * marks "review" is not checkable here and says why there. {@link #theRulesCatchWhatTheyForbid}
 * proves that the rules are not vacuous.
 */
class ArchitectureTest {
    static final String BASE = "io.github.semyonsinchenko.safetensors";
    static final Path ROOT = Path.of(System.getProperty("safetensors.repo.root", "..")).toAbsolutePath().normalize();

    /**
     * Each module (folder of the parent pom's module list) and the modules its main classes may use:
     * the "Depends on" column of ARCHITECTURE.md. Everything else is forbidden, so the CLI and the
     * connector never use each other and nothing uses {@code bench}.
     */
    static final Map<String, Set<String>> MAY_USE = Map.ofEntries(
            entry("java/core", Set.of()),
            entry("java/sampler", Set.of("java/core")),
            entry("java/loader", Set.of("java/core")),
            entry("java/dataset", Set.of("java/core")),
            entry("java/testkit-hdfs", Set.of()),
            entry("java/cli", Set.of("java/core", "java/sampler", "java/loader", "java/dataset")),
            entry("spark/entry", Set.of("java/core")),
            entry("spark", Set.of("java/core", "spark/entry", "java/loader", "java/dataset")),
            entry("spark/preprocess", Set.of("java/core", "java/sampler")));

    /** Modules outside {@link #MAY_USE}: bench may use anything; native and architecture have no main classes. */
    static final Set<String> UNRESTRICTED = Set.of("bench");
    static final Set<String> WITHOUT_CLASSES = Set.of("native", "architecture");

    /** Module folder -> its {@code target/classes}, for every module of the parent pom that has one. */
    static Map<String, Path> moduleClassDirs;
    static JavaClasses classes;

    @BeforeAll
    static void importEveryModule() throws IOException {
        moduleClassDirs = new LinkedHashMap<>();
        for (String module : pomModules()) {
            Path dir = ROOT.resolve(module).resolve(Path.of("target", "classes"));
            if (Files.isDirectory(dir)) {
                moduleClassDirs.put(module, dir);
            }
        }
        classes = new ClassFileImporter().importPaths(List.copyOf(moduleClassDirs.values()));
    }

    static List<String> pomModules() throws IOException {
        Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(ROOT.resolve("pom.xml")));
        List<String> modules = new ArrayList<>();
        while (m.find()) {
            modules.add(m.group(1).trim());
        }
        return modules;
    }

    /** Class name -> its module, or "" for a class of no module; the rules ask once per dependency. */
    static final Map<String, String> MODULE_OF = new ConcurrentHashMap<>();

    /** {@return the module whose {@code target/classes} holds {@code c}, or null (the JDK, a library)} */
    static String moduleOf(JavaClass c) {
        String module = MODULE_OF.computeIfAbsent(c.getFullName(), name -> {
            URI uri = c.getSource().map(s -> s.getUri()).orElse(null);
            if (uri == null || !"file".equals(uri.getScheme())) {
                return "";
            }
            Path file = Path.of(uri);
            for (Map.Entry<String, Path> e : moduleClassDirs.entrySet()) {
                if (file.startsWith(e.getValue())) {
                    return e.getKey();
                }
            }
            return "";
        });
        return module.isEmpty() ? null : module;
    }

    static DescribedPredicate<JavaClass> inModules(Set<String> modules) {
        return DescribedPredicate.describe("in module " + String.join(" or ", new TreeSet<>(modules)),
                c -> {
                    String module = moduleOf(c);
                    return module != null && modules.contains(module);
                });
    }

    /** {@code module}'s main classes use no module but {@code allowed} (and themselves). */
    static ArchRule usesOnly(String module, Set<String> allowed) {
        Set<String> forbidden = new TreeSet<>(moduleClassDirs.keySet());
        forbidden.remove(module);
        forbidden.removeAll(allowed);
        return noClasses().that(inModules(Set.of(module)))
                .should().dependOnClassesThat(inModules(forbidden))
                .as(module + " uses only " + (allowed.isEmpty() ? "itself" : new TreeSet<>(allowed)));
    }

    @Test
    void theMapNamesEveryModule() throws IOException {
        Set<String> named = new TreeSet<>(MAY_USE.keySet());
        named.addAll(UNRESTRICTED);
        named.addAll(WITHOUT_CLASSES);
        assertEquals(named, new TreeSet<>(pomModules()),
                "the parent pom's modules and the map (ARCHITECTURE.md, MAY_USE) must name the same modules");
        for (String module : named) {
            if (!WITHOUT_CLASSES.contains(module)) {
                assertTrue(classes.stream().anyMatch(inModules(Set.of(module))),
                        "no compiled classes of " + module + " among " + moduleClassDirs.values());
            }
        }
    }

    @Test
    void eachModuleUsesOnlyTheModulesTheMapAllows() {
        MAY_USE.forEach((module, allowed) -> usesOnly(module, allowed).check(classes));
    }

    @Test
    void coreNeverSeesSparkHadoopOrPicocli() {
        noClasses().that(inModules(Set.of("java/core")))
                .should().dependOnClassesThat().resideInAnyPackage("org.apache.spark..", "org.apache.hadoop..",
                        "scala..", "picocli..")
                .check(classes);
    }

    /**
     * Core's packages from the bottom up: each uses only the ones below it; {@code options} uses and is
     * used by none of them (the loader, the dataset, the connector and the CLI use it).
     */
    static final List<String> CORE_LAYERS = List.of("format", "mmap", "kernels", "io");

    static ArchRule coreLayers(List<String> bottomUp) {
        LayeredArchitecture rule = layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("options").definedBy(BASE + ".options..");
        for (String p : bottomUp) {
            rule = rule.layer(p).definedBy(BASE + "." + p + "..");
        }
        rule = rule.whereLayer("options").mayNotBeAccessedByAnyLayer();
        for (int i = 0; i < bottomUp.size(); i++) {
            String[] above = bottomUp.subList(i + 1, bottomUp.size()).toArray(String[]::new);
            rule = above.length == 0 ? rule.whereLayer(bottomUp.get(i)).mayNotBeAccessedByAnyLayer()
                    : rule.whereLayer(bottomUp.get(i)).mayOnlyBeAccessedByLayers(above);
        }
        return rule;
    }

    @Test
    void corePackagesAreLayered() {
        coreLayers(CORE_LAYERS).check(classes);
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
     * The incubating Vector API is one of the kernels' backends, chosen by {@code PathSelection}; no
     * other product code uses it (bench may: it reports the machine's vector width).
     */
    static ArchRule vectorApiOnlyIn(String packages) {
        return noClasses().that().resideOutsideOfPackages(packages, BASE + ".bench..")
                .should().dependOnClassesThat().resideInAPackage("jdk.incubator.vector..");
    }

    @Test
    void onlyTheKernelsPackageUsesTheVectorApi() {
        vectorApiOnlyIn(BASE + ".kernels..").check(classes);
    }

    /**
     * A Hadoop configuration reaches executors one way: wrapped in Spark's
     * {@code SerializableConfiguration} and broadcast once, by the connector's
     * {@code spark.conf.SparkHadoopConfs} and by the preprocessor's input stage (which may not depend on
     * the connector). Named by string: Spark is not on this module's class path.
     */
    static ArchRule hadoopConfShippedOnlyBy(String... packages) {
        return noClasses().that().resideOutsideOfPackages(packages)
                .should().callConstructorWhere(DescribedPredicate.describe("new SerializableConfiguration",
                        call -> call.getTargetOwner().getFullName().equals("org.apache.spark.util.SerializableConfiguration")));
    }

    @Test
    void onlySparkConfAndThePreprocessorInputShipAHadoopConfiguration() {
        hadoopConfShippedOnlyBy(BASE + ".spark.conf..", BASE + ".preprocess.input..").check(classes);
    }

    /**
     * One class maps files ({@code mmap.MappedFile}: arena, close, fault registry); the safetensors
     * reader and the sampler's database wrap it.
     */
    static final ArchRule ONLY_MMAP_MAPS = noClasses().that().resideOutsideOfPackage(BASE + ".mmap..")
            .should().callMethodWhere(DescribedPredicate.describe("FileChannel.map",
                    call -> call.getName().equals("map") && call.getTargetOwner().isAssignableTo(FileChannel.class)));

    @Test
    void onlyTheMmapPackageMapsFiles() {
        ONLY_MMAP_MAPS.check(classes);
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

    /** The format's byte order has one home, {@code format.LittleEndian}: nothing else builds little-endian layouts. */
    static final ArchRule ONE_HOME_FOR_LAYOUT_ORDER = noClasses().that().resideInAPackage(BASE + "..")
            .and().doNotHaveFullyQualifiedName(BASE + ".format.LittleEndian")
            .should().callMethodWhere(DescribedPredicate.describe("ValueLayout.withOrder",
                    call -> call.getName().equals("withOrder")
                            && call.getTargetOwner().isAssignableTo(ValueLayout.class)));

    @Test
    void onlyLittleEndianSetsTheByteOrderOfALayout() {
        ONE_HOME_FOR_LAYOUT_ORDER.check(classes);
    }

    /**
     * Only the two binary formats' homes name the byte order itself: {@code format} (the safetensors
     * header and {@code LittleEndian}) and {@code sampler.db} (the database layout); everyone else
     * reads and writes through their layouts.
     */
    static final ArchRule LITTLE_ENDIAN_NAMED_BY_FORMATS_ONLY = noClasses()
            .that().resideOutsideOfPackages(BASE + ".format..", BASE + ".sampler.db..")
            .should().accessField(ByteOrder.class, "LITTLE_ENDIAN");

    @Test
    void onlyTheFormatPackagesNameLittleEndian() {
        LITTLE_ENDIAN_NAMED_BY_FORMATS_ONLY.check(classes);
    }

    /**
     * Settings are read by {@code options.Options}, which takes {@code true}/{@code false} and refuses
     * anything else; the JDK's lenient readers turn a typo into {@code false}.
     */
    static final ArchRule ONE_BOOLEAN_PARSER = noClasses().that().resideOutsideOfPackage(BASE + ".options..")
            .should().callMethod(Boolean.class, "parseBoolean", String.class)
            .orShould().callMethod(Boolean.class, "valueOf", String.class)
            .orShould().callMethod(Boolean.class, "getBoolean", String.class);

    @Test
    void onlyTheOptionParserReadsBooleans() {
        ONE_BOOLEAN_PARSER.check(classes);
    }

    @Test
    void theRulesCatchWhatTheyForbid() {
        JavaClasses bad = new ClassFileImporter().importClasses(Offender.class);
        assertTrue(ONLY_KERNELS_LINK.evaluate(bad).hasViolation(), "Linker outside the kernels package");
        assertTrue(ONLY_MMAP_MAPS.evaluate(bad).hasViolation(), "FileChannel.map outside the mmap package");
        assertTrue(ONE_HOME_FOR_LAYOUT_ORDER.evaluate(bad).hasViolation(), "a layout's byte order set elsewhere");
        assertTrue(LITTLE_ENDIAN_NAMED_BY_FORMATS_ONLY.evaluate(bad).hasViolation(),
                "ByteOrder.LITTLE_ENDIAN named elsewhere");
        assertDetails(3, ONE_BOOLEAN_PARSER.evaluate(bad));
        assertDetails(3, ROOT_LOCALE_ONLY.evaluate(bad));
        assertTrue(sparkFree(BASE + ".spark.read..").evaluate(classes).hasViolation(),
                "the Spark-free rule, asked of the connector's read package, finds its Spark imports");
        assertTrue(usesOnly("java/sampler", Set.of()).evaluate(classes).hasViolation(),
                "the module rule, told the sampler may not use core, finds its uses of core");
        assertTrue(vectorApiOnlyIn(BASE + ".io..").evaluate(classes).hasViolation(),
                "the Vector API rule, told only io may use it, finds the kernels' vector backend");
        assertTrue(hadoopConfShippedOnlyBy(BASE + ".spark.read..").evaluate(classes).hasViolation(),
                "the shipping rule, told only the read package may ship, finds spark.conf");
        assertTrue(coreLayers(CORE_LAYERS.reversed()).evaluate(classes).hasViolation(),
                "core's layers, stacked upside down, are broken by its real uses");
    }

    private static void assertDetails(int expected, EvaluationResult result) {
        List<String> details = result.getFailureReport().getDetails();
        assertEquals(expected, details.size(), String.join("\n", details));
    }

    /**
     * Breaks the rules on purpose (test code, never run): a linker lookup, a file mapped, default-locale
     * formatting, a little-endian layout of its own and lenient booleans.
     */
    static final class Offender {
        static final ValueLayout.OfInt OWN_LE_INT = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);

        Object link() {
            return Linker.nativeLinker().defaultLookup();
        }

        MappedByteBuffer map(FileChannel channel) throws IOException {
            return channel.map(FileChannel.MapMode.READ_ONLY, 0, 1);
        }

        String names(String s) {
            return String.format("%d", 1) + s.toLowerCase() + "%s".formatted(s);
        }

        boolean flags(String s) {
            return Boolean.parseBoolean(s) || Boolean.valueOf(s) || Boolean.getBoolean(s);
        }
    }
}
