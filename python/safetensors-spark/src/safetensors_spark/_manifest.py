"""Reading ``dataset_manifest.json`` and naming a dataset's files on local paths or any fsspec filesystem.

Accepts the shard field ``shard_path`` (written by this project now and by the original connector)
and ``file`` (this project's earlier versions); the JVM reads the same fields the same way
(``dataset.Manifest`` in the safetensors-dataset module, also for MLflow lineage).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field

import fsspec

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


def locate(path, filesystem=None) -> Location:
    """A local path, a ``file:`` URI, any fsspec URL (``s3://...``), or a path on ``filesystem``."""
    path = os.fspath(path)
    if filesystem is not None:
        root = path.rstrip("/") or "/"
        protocol = filesystem.protocol if isinstance(filesystem.protocol, str) else filesystem.protocol[0]
        local = protocol in ("file", "local")
        uri = _file_uri(root) if local else filesystem.unstrip_protocol(root)
        return Location(filesystem, root, uri, local)
    if "://" not in path and not path.startswith("file:"):
        root = os.path.abspath(path)
        return Location(fsspec.filesystem("file"), root, _file_uri(root), True)
    fs, root = fsspec.core.url_to_fs(path)
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    if protocol in ("file", "local"):
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


def read_manifest(loc: Location) -> Manifest:
    path = loc.join(MANIFEST)
    try:
        with loc.fs.open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{MANIFEST} not found at {loc.uri_of(MANIFEST)}: not a committed safetensors dataset "
            "(write one with format(\"safetensors\") first)"
        ) from None
    return parse_manifest(data, loc.uri_of(MANIFEST))


def parse_manifest(data: bytes, where: str) -> Manifest:
    try:
        raw = json.loads(data)
    except ValueError as e:
        raise ValueError(f"{where}: not valid JSON: {e}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a manifest is a JSON object")
    shards = raw.get("shards")
    if not isinstance(shards, list):
        raise ValueError(f"{where}: 'shards' must be an array")
    normalized = []
    for i, s in enumerate(shards):
        p = s.get("shard_path", s.get("file")) if isinstance(s, dict) else None
        if not isinstance(p, str):
            raise ValueError(f"{where}: shard {i} has neither 'file' nor 'shard_path'")
        normalized.append((p, _count(s, "samples_count", where), _count(s, "bytes", where)))
    schema = raw.get("schema")
    return Manifest(
        raw=raw,
        digest=hashlib.sha256(data).hexdigest()[:16],
        format_version=_text(raw, "format_version", where),
        safetensors_version=_text(raw, "safetensors_version", where),
        total_samples=_count(raw, "total_samples", where),
        total_bytes=_count(raw, "total_bytes", where),
        shards=normalized,
        schema=schema if isinstance(schema, dict) else {},
        write_mode=raw.get("write_mode") if isinstance(raw.get("write_mode"), str) else None,
        kv_separator=raw.get("kv_separator") if isinstance(raw.get("kv_separator"), str) else None,
    )


def _text(d: dict, key: str, where: str) -> str:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise ValueError(f"{where}: '{key}' is missing or not a string")
    return str(v)


def _count(d: dict, key: str, where: str) -> int:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{where}: '{key}' is missing or not a non-negative integer")
    return v


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
