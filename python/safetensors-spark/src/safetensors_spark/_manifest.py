"""Reading ``dataset_manifest.json`` and naming a dataset's files on local paths, fsspec file systems
and pyarrow file systems.

The manifest is checked against ``format/dataset_manifest.schema.json`` (shipped in this package as
``dataset_manifest.schema.json``) and by the reader rules the JVM's ``dataset.Manifest`` applies:
shard paths are normalised and must stay inside the dataset root, no shard is listed twice. A
broken rule raises ``DatasetError`` whose ``rule`` is the name of the JVM's ``DatasetRule``.
Accepts the shard field ``shard_path`` (written by this project now and by the original connector)
and ``file`` (this project's earlier versions).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
from dataclasses import dataclass, field
from importlib import resources

import fsspec

from safetensors_spark._names import PathOutsideRoot, relative_path

MANIFEST = "dataset_manifest.json"
INDEX = "_tensor_index.parquet"


@dataclass(frozen=True)
class Location:
    """A dataset root: the fsspec filesystem, the root path on it, and the root as a URI."""

    fs: fsspec.AbstractFileSystem
    root: str
    uri: str
    local: bool

    def join(self, name: str) -> str:
        return f"{self.root.rstrip('/')}/{name}"

    def uri_of(self, name: str) -> str:
        return f"{self.uri.rstrip('/')}/{name}"


SCHEMA_RESOURCE = "dataset_manifest.schema.json"

# URI schemes of pyarrow file systems (FileSystem.type_name) where they differ from the name.
_ARROW_SCHEMES = {"gcs": "gs", "local": "file"}


def as_fsspec(filesystem) -> fsspec.AbstractFileSystem:
    """``filesystem`` as an fsspec file system: fsspec ones as they are, pyarrow ones
    (``pyarrow.fs.FileSystem``: local, S3, GCS, HDFS, ...) wrapped."""
    if isinstance(filesystem, fsspec.AbstractFileSystem):
        return filesystem
    try:
        import pyarrow.fs as pafs
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        pafs = None
    if pafs is not None and isinstance(filesystem, pafs.FileSystem):
        from fsspec.implementations.arrow import ArrowFSWrapper

        return ArrowFSWrapper(filesystem)
    raise TypeError(f"filesystem must be an fsspec or a pyarrow file system, got {type(filesystem).__name__}")


def _protocol(fs: fsspec.AbstractFileSystem) -> str:
    from fsspec.implementations.arrow import ArrowFSWrapper

    if isinstance(fs, ArrowFSWrapper):
        return _ARROW_SCHEMES.get(fs.fs.type_name, fs.fs.type_name)
    return fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]


def locate(path, filesystem=None) -> Location:
    """A local path, a ``file:`` URI, any fsspec URL (``s3://...``), or a path on ``filesystem``
    (an fsspec or a pyarrow file system)."""
    path = os.fspath(path)
    if filesystem is not None:
        fs = as_fsspec(filesystem)
        root = path.rstrip("/") or "/"
        protocol = _protocol(fs)
        local = protocol in ("file", "local")
        if local:
            root = os.path.abspath(root)
            uri = _file_uri(root)
        elif fs is filesystem:
            uri = fs.unstrip_protocol(root)
        else:  # a pyarrow file system: its type names the scheme
            uri = f"{protocol}://{root.lstrip('/')}"
        return Location(fs, root, uri, local)
    if "://" not in path and not path.startswith("file:"):
        root = os.path.abspath(path)
        return Location(fsspec.filesystem("file"), root, _file_uri(root), True)
    fs, root = fsspec.core.url_to_fs(path)
    if _protocol(fs) in ("file", "local"):
        root = os.path.abspath(root)
        return Location(fs, root, _file_uri(root), True)
    return Location(fs, root.rstrip("/"), path.rstrip("/"), False)


def _file_uri(abs_path: str) -> str:
    # file:///abs/path, the form the JVM's SafetensorsDatasetSource writes too.
    from urllib.parse import quote

    return "file://" + quote(abs_path, safe="/")


@dataclass(frozen=True)
class Manifest:
    """The parsed manifest, with the raw bytes (for the digest) and the shards normalized."""

    raw: dict
    digest: str
    format_version: str
    safetensors_version: str
    total_samples: int
    total_bytes: int
    shards: list = field(default_factory=list)  # list of (path, samples_count, bytes)
    schema: dict = field(default_factory=dict)
    write_mode: str | None = None  # "batch", "kv", or None (the original connector does not record it)
    kv_separator: str | None = None  # kv: tensors are <key><kv_separator><column>; None: earlier naming
    index_file: str | None = None  # the index the manifest names (normalised), if any


class DatasetError(ValueError):
    """A dataset's metadata breaks a rule: ``rule`` is the name of the JVM's ``DatasetRule``
    (``MANIFEST_UNREADABLE``, ``MANIFEST_INVALID``, ``UNKNOWN_WRITE_MODE``, ``PATH_OUTSIDE_ROOT``,
    ``DUPLICATE_SHARD``), ``source`` the file."""

    def __init__(self, rule: str, source: str, detail: str):
        self.rule, self.source = rule, source
        super().__init__(f"{source}: {rule}: {detail}")


def read_manifest(loc: Location) -> Manifest:
    """The manifest of the dataset at ``loc``: ``FileNotFoundError`` when there is none, ``DatasetError``
    (``MANIFEST_UNREADABLE``) when it exists but cannot be read, never taken for absent."""
    path = loc.join(MANIFEST)
    try:
        with loc.fs.open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{MANIFEST} not found at {loc.uri_of(MANIFEST)}: not a committed safetensors dataset "
            "(write one with format(\"safetensors\") first)"
        ) from None
    except OSError as e:
        raise DatasetError("MANIFEST_UNREADABLE", loc.uri_of(MANIFEST), f"cannot read it: {e}") from e
    return parse_manifest(data, loc.uri_of(MANIFEST))


@functools.lru_cache(maxsize=1)
def manifest_schema() -> dict:
    """``format/dataset_manifest.schema.json``, as shipped in this package."""
    return json.loads(resources.files("safetensors_spark").joinpath(SCHEMA_RESOURCE).read_text("utf-8"))


@functools.lru_cache(maxsize=1)
def _validator():
    import jsonschema

    cls = jsonschema.validators.validator_for(manifest_schema())
    return cls(manifest_schema())


def schema_errors(doc) -> list:
    """What keeps ``doc`` from matching the manifest schema, as "<where>: <message>" lines (none: it matches)."""
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
            for e in sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]


def parse_manifest(data: bytes, where: str) -> Manifest:
    """A manifest's bytes, checked: JSON, paths inside the root (normalised), the schema, no shard twice.
    Totals are computed from the shards (``raw`` keeps what the manifest records)."""
    try:
        raw = json.loads(data)
    except ValueError as e:
        raise DatasetError("MANIFEST_INVALID", where, f"not valid JSON: {e}") from None
    if not isinstance(raw, dict):
        raise DatasetError("MANIFEST_INVALID", where, "a manifest is a JSON object")
    # Readers normalise the paths a manifest names ("./part-1" is "part-1"); the schema then checks
    # the normalised document, so that a writer's plain names are the only form it accepts.
    doc = copy.deepcopy(raw)
    for i, s in enumerate(doc.get("shards") if isinstance(doc.get("shards"), list) else []):
        for key in ("shard_path", "file"):
            if isinstance(s, dict) and isinstance(s.get(key), str):
                s[key] = _relative(s[key], where, f"shard {i}")
    index = doc.get("index")
    if isinstance(index, dict) and isinstance(index.get("file"), str):
        index["file"] = _relative(index["file"], where, "index")
    # Totals are the shards' sums, whatever the manifest records (as on the JVM); validate() compares.
    counted = doc.get("shards") if isinstance(doc.get("shards"), list) else []
    for total, field_name in (("total_samples", "samples_count"), ("total_bytes", "bytes")):
        values = [s.get(field_name) for s in counted if isinstance(s, dict)]
        if len(values) == len(counted) and all(type(v) is int for v in values):
            doc[total] = sum(values)
    if "write_mode" in doc and doc["write_mode"] not in ("batch", "kv"):
        raise DatasetError("UNKNOWN_WRITE_MODE", where, f"write_mode {doc['write_mode']!r}: must be batch or kv")
    problems = schema_errors(doc)
    if problems:
        raise DatasetError("MANIFEST_INVALID", where, "; ".join(problems[:5]))
    shards, seen = [], {}
    for i, s in enumerate(doc["shards"]):
        p = s.get("shard_path", s.get("file"))
        if p in seen:
            raise DatasetError("DUPLICATE_SHARD", where, f"{p} at positions {seen[p]} and {i}")
        seen[p] = i
        shards.append((p, s["samples_count"], s["bytes"]))
    return Manifest(
        raw=raw,
        digest=hashlib.sha256(data).hexdigest()[:16],
        format_version=doc["format_version"],
        safetensors_version=doc["safetensors_version"],
        total_samples=doc["total_samples"],
        total_bytes=doc["total_bytes"],
        shards=shards,
        schema=doc.get("schema", {}),
        write_mode=doc.get("write_mode"),
        kv_separator=doc.get("kv_separator"),
        index_file=index["file"] if isinstance(index, dict) else None,
    )


def _relative(path: str, where: str, what: str) -> str:
    try:
        return relative_path(path)
    except PathOutsideRoot as e:
        raise DatasetError("PATH_OUTSIDE_ROOT", where, f"{what}: {e}") from None


def source_dict(loc: Location, m: Manifest) -> dict:
    """The MLflow dataset source document; field for field what the JVM's toJson() gives."""
    return {
        "uri": loc.uri_of(MANIFEST),
        "dataset_uri": loc.uri,
        "digest": m.digest,
        "format_version": m.format_version,
        "safetensors_version": m.safetensors_version,
        "total_samples": m.total_samples,
        "total_bytes": m.total_bytes,
        "num_shards": len(m.shards),
        "shards": [{"path": p, "samples_count": n, "bytes": b} for p, n, b in m.shards],
        "schema": m.schema,
    }
