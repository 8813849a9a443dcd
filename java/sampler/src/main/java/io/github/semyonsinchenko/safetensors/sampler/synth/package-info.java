/**
 * The project's one synthetic relational dataset (a Q&amp;A site with users, posts, comments and
 * votes), drawn from one seeded generator at any size
 * ({@link io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticData}) and encoded straight
 * into a sampler database ({@link io.github.semyonsinchenko.safetensors.sampler.synth.SyntheticDatabase})
 * for the demo, the tests and the benchmarks.
 */
package io.github.semyonsinchenko.safetensors.sampler.synth;
