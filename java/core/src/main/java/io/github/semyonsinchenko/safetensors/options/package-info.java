/**
 * The one strict parser of settings given as names and strings (Spark options, loader properties
 * and variables, CLI key=value options): unknown names refused with the closest valid one, values
 * checked against their type and range, every refusal an
 * {@link io.github.semyonsinchenko.safetensors.options.OptionException} naming the option.
 */
package io.github.semyonsinchenko.safetensors.options;
