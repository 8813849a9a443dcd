"""The package against the project's shared vectors, so that it follows the same rules as the JVM
(instead of a second reading of the spec): the safetensors header rules (format/vectors/*.json and
the malformed corpus java/core/src/test/resources/malformed/), the dataset's tensor and shard names,
its shard paths and its manifests (format/vectors/dataset/). No Spark."""

import csv
import io
import json
from pathlib import Path

import pytest

from safetensors_spark._header import HeaderError, read_header
from safetensors_spark._manifest import DatasetError, manifest_schema, parse_manifest, schema_errors
from safetensors_spark._names import PathOutsideRoot, parse_batch, parse_kv, relative_path

ROOT = Path(__file__).resolve().parents[3]
VECTORS = ROOT / "format" / "vectors"
DATASET = VECTORS / "dataset"
MALFORMED = ROOT / "java" / "core" / "src" / "test" / "resources" / "malformed"


def tsv(path):
    with open(path, newline="", encoding="utf-8") as f:
        lines = [line for line in f if line.strip()]
    header = lines[0].lstrip("# ").rstrip("\n").split("\t")
    return [dict(zip(header, row)) for row in csv.reader(lines[1:], delimiter="\t")]


def test_the_shipped_schema_is_the_format_s():
    assert manifest_schema() == json.loads((ROOT / "format" / "dataset_manifest.schema.json").read_text())


# ---------------------------------------------------------------- safetensors headers

MALFORMED_CASES = tsv(MALFORMED / "expected.tsv")


@pytest.mark.parametrize("case", MALFORMED_CASES, ids=[c["file"] for c in MALFORMED_CASES])
def test_every_malformed_file_breaks_the_rule_the_jvm_names(case):
    data = (MALFORMED / case["file"]).read_bytes()
    with pytest.raises(HeaderError) as e:
        read_header(io.BytesIO(data), len(data), case["file"])
    assert (e.value.violation, e.value.tensor or "-") == (case["violation"], case["tensor"])


POSITIVE = sorted(VECTORS.glob("*.json"))


@pytest.mark.parametrize("path", POSITIVE, ids=[p.stem for p in POSITIVE])
def test_every_valid_file_reads_with_its_tensors_and_metadata(path):
    v = json.loads(path.read_text())
    data = bytes.fromhex("".join(v["file"]))
    header = read_header(io.BytesIO(data), len(data), path.name)
    assert header.metadata == (v.get("metadata") or {})
    got = {t.name: (t.dtype, list(t.shape), data[header.data_start + t.begin:header.data_start + t.end].hex())
           for t in header.tensors}
    assert got == {t["name"]: (t["dtype"], t["shape"], t["data"].lower()) for t in v["tensors"]}


# ---------------------------------------------------------------- dataset names and paths

KV = json.loads((DATASET / "kv_names.json").read_text())["cases"]


@pytest.mark.parametrize("case", KV, ids=[c["name"] for c in KV])
def test_kv_tensor_names(case):
    want = None if case["key"] is None else (case["key"], case["column"])
    assert parse_kv(case["name"], case["columns"], case["separator"]) == want


BATCH = json.loads((DATASET / "batch_names.json").read_text())["cases"]


@pytest.mark.parametrize("case", BATCH, ids=[c["name"] for c in BATCH])
def test_batch_tensor_names(case):
    want = None if case["column"] is None else (case["column"], case["batch"])
    assert parse_batch(case["name"], case["columns"]) == want


SHARD_NAMES = json.loads((DATASET / "shard_names.json").read_text())["names"]


@pytest.mark.parametrize("case", SHARD_NAMES, ids=[c["name"] for c in SHARD_NAMES])
def test_the_schema_accepts_the_shard_names_writers_give(case):
    doc = {"format_version": "1.0", "safetensors_version": "1.0", "total_samples": 1, "total_bytes": 8,
           "shards": [{"shard_path": case["name"], "samples_count": 1, "bytes": 8}]}
    assert (schema_errors(doc) == []) == case["manifest_schema"]


SHARD_PATHS = (json.loads((DATASET / "shard_paths.json").read_text())["cases"]
               if (DATASET / "shard_paths.json").exists() else [])


@pytest.mark.skipif(not SHARD_PATHS, reason="format/vectors/dataset/shard_paths.json is not in this tree")
@pytest.mark.parametrize("case", SHARD_PATHS, ids=[c["path"] or "empty" for c in SHARD_PATHS])
def test_shard_paths_are_normalised_or_refused(case):
    if case["normalised"] is None:
        with pytest.raises(PathOutsideRoot):
            relative_path(case["path"])
    else:
        assert relative_path(case["path"]) == case["normalised"]


# ---------------------------------------------------------------- manifests

MANIFESTS = tsv(DATASET / "manifests" / "expected.tsv")


@pytest.mark.parametrize("case", MANIFESTS, ids=[c["file"] for c in MANIFESTS])
def test_manifests_against_the_schema_and_the_reader_rules(case):
    data = (DATASET / "manifests" / case["file"]).read_bytes()
    assert (schema_errors(json.loads(data)) == []) == (case["schema"] == "valid")
    # The "reader" column names the rule a reader raises; vectors without it say it in words (README):
    # readers follow the schema, but normalise "./part-...", compute totals from the shards and refuse
    # a shard listed twice.
    lenient = {"shard_dot_segment.json": "ok", "negative_total_samples.json": "ok"}
    strict = {"duplicate_shard.json": None}
    reader = case.get("reader") or lenient.get(case["file"], strict.get(case["file"],
                                                                      "ok" if case["schema"] == "valid" else None))
    if reader is None:
        with pytest.raises(DatasetError):
            parse_manifest(data, case["file"])
    elif reader == "ok":
        parse_manifest(data, case["file"])
    else:
        with pytest.raises(DatasetError) as e:
            parse_manifest(data, case["file"])
        assert e.value.rule == reader
