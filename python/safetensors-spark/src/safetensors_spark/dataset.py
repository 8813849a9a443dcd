"""A dataset directory written by the safetensors Spark connector, seen from plain Python.

``DistributedSafetensorsDataset.from_path(path)`` reads ``dataset_manifest.json`` (and the optional
``_tensor_index.parquet``) from a local directory or any fsspec filesystem. It lists shards, gives
the schema and the tensor index, assigns shards to training workers, validates the files against
the manifest, and iterates one worker's shards as dicts of numpy arrays: memory-mapped (no copy)
for local files, ranged reads elsewhere. The names follow the original connector's Python package.
"""

from __future__ import annotations

import heapq
import json
import struct
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from safetensors_spark._manifest import INDEX, MANIFEST, Location, locate, read_manifest


@dataclass(frozen=True)
class ShardInfo:
    """One shard: path relative to the dataset root, samples (manifest), tensors (index, if any), bytes."""

    shard_path: str
    num_samples: int
    num_tensors: int | None = None
    bytes: int = 0


def numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of a safetensors dtype; BF16 and F8 through ml_dtypes."""
    plain = {
        "BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "U16": np.uint16, "I16": np.int16, "U32": np.uint32,
        "I32": np.int32, "U64": np.uint64, "I64": np.int64, "F16": np.float16, "F32": np.float32,
        "F64": np.float64, "C64": np.complex64,
    }
    if dtype in plain:
        return np.dtype(plain[dtype]).newbyteorder("<")
    import ml_dtypes

    extra = {"BF16": "bfloat16", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
             "F8_E8M0": "float8_e8m0fnu", "F8_E4M3FNUZ": "float8_e4m3fnuz", "F8_E5M2FNUZ": "float8_e5m2fnuz"}
    if dtype in extra and hasattr(ml_dtypes, extra[dtype]):
        return np.dtype(getattr(ml_dtypes, extra[dtype]))
    raise ValueError(f"dtype {dtype} has no numpy equivalent (sub-byte or unknown)")


def read_header(fs, path: str, size: int) -> tuple[int, dict]:
    """(data start, header dict) of a safetensors file; ValueError naming the file and the rule."""
    with fs.open(path, "rb") as f:
        prefix = f.read(8)
        if len(prefix) < 8:
            raise ValueError(f"{path}: shorter than the 8-byte header length")
        (n,) = struct.unpack("<Q", prefix)
        if n > size - 8:
            raise ValueError(f"{path}: header length {n} exceeds the file ({size} bytes)")
        try:
            header = json.loads(f.read(n))
        except ValueError as e:
            raise ValueError(f"{path}: header is not valid JSON: {e}") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: header is not a JSON object")
    start = 8 + n
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        if not 0 <= begin <= end <= size - start:
            raise ValueError(f"{path}: tensor {name!r} data_offsets {[begin, end]} fall outside the file")
    return start, header


class DistributedSafetensorsDataset:
    """Metadata and per-worker reading of one dataset directory (see the module docstring)."""

    def __init__(self, location: Location, manifest, index_table=None):
        self._loc = location
        self._manifest = manifest
        self._index_table = index_table

    @classmethod
    def from_path(cls, path, filesystem=None) -> "DistributedSafetensorsDataset":
        """Open the dataset at ``path`` (local path, URL such as ``s3://...``, or a path on an fsspec ``filesystem``).

        Raises ``FileNotFoundError`` naming ``dataset_manifest.json`` when there is none.
        """
        loc = locate(path, filesystem)
        manifest = read_manifest(loc)
        return cls(loc, manifest, _read_index(loc, manifest))

    # ------------------------------------------------------------------ metadata

    @property
    def path(self) -> str:
        return self._loc.root

    @property
    def uri(self) -> str:
        return self._loc.uri

    @property
    def manifest(self) -> dict:
        """The manifest as written."""
        return self._manifest.raw

    def list_shards(self) -> list[ShardInfo]:
        """The shards in manifest order."""
        tensors = {}
        if self._index_table is not None and "file_name" in self._index_table.column_names:
            for name in self._index_table.column("file_name").to_pylist():
                tensors[name] = tensors.get(name, 0) + 1
        out = []
        for p, samples, size in self._manifest.shards:
            count = self._manifest.raw["shards"][len(out)].get("num_tensors", tensors.get(p) if tensors else None)
            out.append(ShardInfo(shard_path=p, num_samples=samples, num_tensors=count, bytes=size))
        return out

    def get_schema(self) -> dict:
        """Column -> {"dtype", "shape"} (per sample) from the manifest; {} when it has none."""
        return dict(self._manifest.schema)

    def get_index(self):
        """``_tensor_index.parquet`` as a ``pyarrow.Table``, or None when the dataset has no index."""
        return self._index_table

    # ------------------------------------------------------------------ assignment

    def assign_shards(self, num_workers: int, strategy: str = "round_robin") -> dict[int, list[ShardInfo]]:
        """Worker id -> shards. ``round_robin``: shard i to worker i % n. ``balance``: largest shard
        first to the worker with the fewest bytes so far (ties to the lower id), so byte totals are even."""
        if not isinstance(num_workers, int) or num_workers <= 0:
            raise ValueError(f"num_workers must be a positive integer, got {num_workers!r}")
        if strategy not in ("round_robin", "balance"):
            raise ValueError(f"strategy must be 'round_robin' or 'balance', got {strategy!r}")
        shards = self.list_shards()
        out: dict[int, list[ShardInfo]] = {w: [] for w in range(num_workers)}
        if strategy == "round_robin":
            for i, s in enumerate(shards):
                out[i % num_workers].append(s)
            return out
        heap = [(0, w) for w in range(num_workers)]
        for s in sorted(shards, key=lambda s: (-s.bytes, s.shard_path)):
            load, w = heapq.heappop(heap)
            out[w].append(s)
            heapq.heappush(heap, (load + s.bytes, w))
        return out

    # ------------------------------------------------------------------ checks

    def validate(self) -> dict[str, bool]:
        """Checks of the files against the manifest; every value True means the dataset is sound.

        has_manifest, has_shards, shards_exist, sizes_match (file size = manifest bytes),
        headers_valid (every shard's header parses and its tensors lie inside the file),
        totals_match (shard samples and bytes add up to the totals), index_matches (every index
        row names a listed shard; True without an index).
        """
        shards = self.list_shards()
        fs = self._loc.fs
        checks = {"has_manifest": True, "has_shards": len(shards) > 0, "shards_exist": True,
                  "sizes_match": True, "headers_valid": True}
        for s in shards:
            p = self._loc.join(s.shard_path)
            if not fs.exists(p):
                checks["shards_exist"] = checks["sizes_match"] = checks["headers_valid"] = False
                continue
            size = fs.size(p)
            if size != s.bytes:
                checks["sizes_match"] = False
            try:
                read_header(fs, p, size)
            except (ValueError, KeyError, TypeError):
                checks["headers_valid"] = False
        checks["totals_match"] = (sum(s.num_samples for s in shards) == self._manifest.total_samples
                                  and sum(s.bytes for s in shards) == self._manifest.total_bytes)
        if self._index_table is not None and "file_name" in self._index_table.column_names:
            listed = {s.shard_path for s in shards}
            checks["index_matches"] = set(self._index_table.column("file_name").to_pylist()) <= listed
        else:
            checks["index_matches"] = True
        return checks

    def describe(self) -> str:
        shards = self.list_shards()
        lines = [
            f"DistributedSafetensorsDataset: {self._loc.uri}",
            f"  Format version: {self._manifest.format_version}",
            f"  Shards: {len(shards)}",
            f"  Total samples: {self._manifest.total_samples}",
            f"  Total bytes: {self._manifest.total_bytes}",
            f"  Index: {'yes, %d tensors' % self._index_table.num_rows if self._index_table is not None else 'no'}",
        ]
        schema = self.get_schema()
        if schema:
            lines.append("  Schema:")
            for name, info in schema.items():
                lines.append(f"    {name}: {info.get('dtype', '?')} {info.get('shape', [])}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"DistributedSafetensorsDataset({self._loc.uri!r})"

    # ------------------------------------------------------------------ reading

    def iter_worker(self, rank: int, world_size: int, strategy: str = "round_robin") -> Iterator[dict]:
        """The samples of worker ``rank`` of ``world_size`` (its shards from ``assign_shards``), in order.

        Each item is a dict ``{column: numpy array, ..., "__key__": str}``: one per written row in
        key-value datasets (tensors ``<key><kv_separator><column>``; ``__key__`` the row key), one
        per batch in batch datasets (a file per batch with tensors named after the columns, or
        packed ``<column>/<batch>``; arrays keep the batch dimension; ``__key__`` the batch number
        within the shard), one per tensor for other files. Local
        shards are memory-mapped and the arrays are read-only views of the mapping.
        """
        if not 0 <= rank < world_size:
            raise ValueError(f"rank must be in [0, {world_size}), got {rank}")
        for shard in self.assign_shards(world_size, strategy)[rank]:
            yield from self.iter_shard(shard)

    def iter_shard(self, shard: ShardInfo | str) -> Iterator[dict]:
        """The samples of one shard (see ``iter_worker``)."""
        name = shard.shard_path if isinstance(shard, ShardInfo) else shard
        path = self._loc.join(name)
        fs = self._loc.fs
        size = fs.size(path)
        start, header = read_header(fs, path, size)
        tensors = sorted(((k, v) for k, v in header.items() if k != "__metadata__"),
                         key=lambda kv: kv[1]["data_offsets"][0])
        mapped = np.memmap(path, dtype=np.uint8, mode="r") if self._loc.local else None
        columns = list(self.get_schema())
        m = self._manifest
        # The writer orders tensors by dtype and name, so the tensors of one sample need not be
        # adjacent: group by sample key first (header only), then read in order of first offset.
        groups: dict[str, list] = {}
        for tname, info in tensors:
            key, column = self._split(tname, columns, m.write_mode, m.kv_separator)
            groups.setdefault(key, []).append((column, info))
        for key, members in groups.items():
            sample = {}
            for column, info in members:
                begin, end = info["data_offsets"]
                if mapped is not None:
                    raw = mapped[start + begin:start + end]
                else:
                    raw = np.frombuffer(fs.cat_file(path, start + begin, start + end), dtype=np.uint8)
                sample[column] = raw.view(numpy_dtype(info["dtype"])).reshape(info["shape"])
            sample["__key__"] = key
            yield sample

    @staticmethod
    def _split(name: str, columns: list[str], write_mode=None, kv_separator=None) -> tuple[str, str]:
        """(sample key, column) of a tensor name (format/dataset.md): kv ``<key><sep><column>``;
        batch ``<column>`` (a file per batch) or ``<column>/<batch>`` (packed); in datasets of
        earlier versions ``<key>/<column>`` or ``<key>`` of the only column; a tensor of a plain
        file is its own column."""
        if write_mode == "kv" and kv_separator is not None:
            for c in columns:
                if name.endswith(kv_separator + c) and len(name) >= len(kv_separator) + len(c):
                    return name[: len(name) - len(c) - len(kv_separator)], c
            return name, name
        if write_mode == "batch" and name in columns:
            return "0", name
        for c in columns:
            if name.endswith("/" + c):
                return name[: -len(c) - 1], c
        for c in columns:
            if name.startswith(c + "/"):
                return name[len(c) + 1:], c
        if len(columns) == 1:
            return name, columns[0]
        return name, name

    # ------------------------------------------------------------------ pickling

    def __getstate__(self):
        return {"loc": self._loc, "manifest": self._manifest, "index": self._index_table}

    def __setstate__(self, state):
        self._loc = state["loc"]
        self._manifest = state["manifest"]
        self._index_table = state["index"]


def _read_index(loc: Location, manifest):
    """The tensor index as one pyarrow table, or None: the file the manifest names, else
    ``_tensor_index.parquet`` (a directory of Parquet part files, or one file in datasets of
    earlier versions)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    named = manifest.raw.get("index")
    path = loc.join(named["file"] if isinstance(named, dict) and isinstance(named.get("file"), str) else INDEX)
    if not loc.fs.exists(path):
        return None
    if loc.fs.isdir(path):
        parts = sorted(p for p in loc.fs.ls(path, detail=False)
                       if p.rsplit("/", 1)[-1].endswith(".parquet") and not p.rsplit("/", 1)[-1].startswith((".", "_")))
    else:
        parts = [path]
    tables = []
    for p in parts:
        with loc.fs.open(p, "rb") as f:
            tables.append(pq.read_table(f))
    return pa.concat_tables(tables) if tables else None


__all__ = ["DistributedSafetensorsDataset", "ShardInfo", "numpy_dtype", "MANIFEST"]
