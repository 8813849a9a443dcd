package io.github.semyonsinchenko.safetensors.bench;

import io.github.semyonsinchenko.safetensors.kernels.Kernels;
import java.util.Locale;
import jdk.incubator.vector.FloatVector;

/**
 * Prints, as one JSON object, what the report needs to describe the Java side of a run: the JDK,
 * the path the facade picks by default, the native library's version and ISA level, and the
 * Vector API's preferred width. Run with the benchmark JVM's flags:
 * {@code java --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector -cp
 * benchmarks.jar io.github.semyonsinchenko.safetensors.bench.BenchInfo}.
 */
public final class BenchInfo {
    private BenchInfo() {}

    public static void main(String[] args) {
        StringBuilder json = new StringBuilder("{\n");
        field(json, "java_version", System.getProperty("java.version"));
        field(json, "java_vm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
        field(json, "java_vendor", System.getProperty("java.vendor"));
        field(json, "os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        field(json, "available_processors", Integer.toString(Runtime.getRuntime().availableProcessors()));
        field(json, "default_path", Kernels.implementation().name());
        field(json, "default_path_description", Kernels.description());
        field(json, "native_version", Kernels.nativeVersion().orElse(""));
        field(json, "native_isa", Kernels.nativeIsa().orElse(""));
        field(json, "native_unavailable_reason", Kernels.nativeUnavailableReason().orElse(""));
        field(json, "native_isa_env", System.getenv().getOrDefault("SAFETENSORS_NATIVE_ISA", ""));
        json.append("  \"vector_bits\": ").append(FloatVector.SPECIES_PREFERRED.vectorBitSize()).append('\n');
        json.append("}");
        System.out.println(json);
    }

    private static void field(StringBuilder json, String key, String value) {
        json.append("  \"").append(key).append("\": \"").append(escape(value)).append("\",\n");
    }

    private static String escape(String s) {
        StringBuilder b = new StringBuilder();
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (ch < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
                }
            }
        }
        return b.toString();
    }
}
