/**
 * Dtype conversions and row gathers over memory segments and arrays, behind one façade,
 * {@link io.github.semyonsinchenko.safetensors.kernels.Kernels}: the native SIMD library when it
 * loads, else the Vector API, else plain Java, all giving the same bits. The only code of the
 * project that calls native functions; also transparent huge page allocation
 * ({@link io.github.semyonsinchenko.safetensors.kernels.HugePages}) and the numeric rules of
 * narrowing ({@link io.github.semyonsinchenko.safetensors.kernels.Narrowing}).
 */
package io.github.semyonsinchenko.safetensors.kernels;
