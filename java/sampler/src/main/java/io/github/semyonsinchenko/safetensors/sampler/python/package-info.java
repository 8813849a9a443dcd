/**
 * The Java side of the Python binding {@code safetensors_jvm_sampler}, called through JPype: batch
 * descriptions that let Python wrap a batch's memory as numpy arrays without copying.
 */
package io.github.semyonsinchenko.safetensors.sampler.python;
