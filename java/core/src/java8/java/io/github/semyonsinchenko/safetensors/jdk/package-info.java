/**
 * The JDK floor: which Java safetensors-jvm needs and the one-line message for an older one.
 * Compiled for Java 8, so the entry classes that a runtime loads by name can check the running Java
 * before touching anything newer.
 */
package io.github.semyonsinchenko.safetensors.jdk;
