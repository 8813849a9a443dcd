/**
 * The safetensors dataset format (format/dataset.md), free of Spark: its layout and named rules,
 * the manifest and the tensor index (checked when read, never trusted blindly), optimistic commits
 * that let several writers append to one path without losing a write, version history, and vacuum
 * of files no retained version uses. The connector's job commit, the CLI and plain JVM programs all
 * go through it.
 */
package io.github.semyonsinchenko.safetensors.dataset;
