/**
 * MLflow lineage of a dataset: the dataset source document MLflow records for a dataset's manifest,
 * the same one the Python package logs for the same path.
 */
package io.github.semyonsinchenko.safetensors.dataset.mlflow;
