/**
 * Memory-mapped files and their faults: one way to map a file read-only
 * ({@link io.github.semyonsinchenko.safetensors.mmap.MappedFile}), the registry that names the file
 * and tensor behind a faulting address
 * ({@link io.github.semyonsinchenko.safetensors.mmap.MappedFiles}), and the exception a read of a
 * file truncated while mapped becomes
 * ({@link io.github.semyonsinchenko.safetensors.mmap.MappedFileFaultException}) instead of a JVM
 * crash.
 */
package io.github.semyonsinchenko.safetensors.mmap;
