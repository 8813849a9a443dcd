"""A dataset directory written by the safetensors Spark connector, seen from plain Python.

``DistributedSafetensorsDataset.from_path(path)`` reads ``dataset_manifest.json`` (and the optional
``_tensor_index.parquet``) from a local directory, an fsspec or a pyarrow file system. It lists shards, gives
the schema and the tensor index, assigns shards to training workers, validates the files against
the manifest, and iterates one worker's shards as dicts of numpy arrays: memory-mapped (no copy)
for local files, ranged reads elsewhere. The names follow the original connector's Python package.
"""

from __future__ import annotations

import heapq
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from safetensors_spark._header import Header, HeaderError, read_header as _read_header
from safetensors_spark._manifest import (INDEX, MANIFEST, DatasetError, Location, locate, parse_manifest,
                                         read_manifest)
from safetensors_spark._names import parse_batch, parse_kv


@dataclass(frozen=True)
class ShardInfo:
    """One shard: path relative to the dataset root, samples (manifest), tensors (see
    ``DistributedSafetensorsDataset.list_shards``), bytes (manifest)."""

    shard_path: str
    num_samples: int
    num_tensors: int = 0
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


def read_header(fs, path: str, size: int | None = None) -> Header:
    """The validated header of the safetensors file ``path`` on the fsspec file system ``fs``: one
    read of the prefix and one of the header. ``HeaderError`` (a ``ValueError``) names the file, the
    tensor and the rule broken (``safetensors_spark._header``)."""
    with fs.open(path, "rb") as f:
        return _read_header(f, fs.size(path) if size is None else size, path)


class DistributedSafetensorsDataset:
    """Metadata and per-worker reading of one dataset directory (see the module docstring)."""

    def __init__(self, location: Location, manifest, index_table=None, path=None):
        self._loc = location
        self._manifest = manifest
        self._index_table = index_table
        self._path = location.root if path is None else path  # as given to from_path (the original's attribute)
        self._tensor_counts = None  # shard -> tensors, read on first use

    @classmethod
    def from_path(cls, path, filesystem=None) -> "DistributedSafetensorsDataset":
        """Open the dataset at ``path``: a local path, a URL such as ``s3://...``, or a path on
        ``filesystem`` (an fsspec file system, or a ``pyarrow.fs.FileSystem`` such as
        ``pyarrow.fs.LocalFileSystem()`` or ``S3FileSystem(...)``).

        Raises ``FileNotFoundError`` naming ``dataset_manifest.json`` when there is none, and
        ``DatasetError`` (a ``ValueError`` with the rule broken) when the manifest cannot be read
        or breaks the format (``format/dataset.md``).
        """
        loc = locate(path, filesystem)
        manifest = read_manifest(loc)
        return cls(loc, manifest, _read_index(loc, manifest), path=path)

    # ------------------------------------------------------------------ metadata

    @property
    def path(self) -> str:
        """The dataset root on its file system (absolute for local paths)."""
        return self._loc.root

    @property
    def uri(self) -> str:
        return self._loc.uri

    @property
    def manifest(self) -> dict:
        """The manifest as written."""
        return self._manifest.raw

    def list_shards(self) -> list[ShardInfo]:
        """The shards in manifest order. ``num_tensors`` comes from the tensor index when the dataset
        has one, else from the layout where the format fixes it (kv: one tensor per row and column;
        batch, one file per batch: one per column), else from the shards' headers (read once per
        dataset object, and pickled with it)."""
        counts = self._counts()
        return [ShardInfo(shard_path=p, num_samples=samples, num_tensors=counts[p], bytes=size)
                for p, samples, size in self._manifest.shards]

    def _counts(self) -> dict:
        if self._tensor_counts is None:
            counts = {p: 0 for p, _, _ in self._manifest.shards}
            if self._index_table is not None and "file_name" in self._index_table.column_names:
                for name in self._index_table.column("file_name").to_pylist():
                    if name in counts:
                        counts[name] += 1
            elif self._tensors_per_sample() is not None:
                counts = {p: n * self._tensors_per_sample() for p, n, _ in self._manifest.shards}
            elif self._tensors_per_file() is not None:
                counts = {p: self._tensors_per_file() for p in counts}
            else:
                fs = self._loc.fs

                def count(p):
                    return len(read_header(fs, self._loc.join(p)).tensors)

                paths = list(counts)
                # Remote stores answer many small reads at once; a local disk needs no threads.
                workers = 1 if self._loc.local else min(16, len(paths) or 1)
                with ThreadPoolExecutor(workers) as pool:
                    counts = dict(zip(paths, pool.map(count, paths)))
            self._tensor_counts = counts
        return self._tensor_counts

    def _tensors_per_sample(self) -> int | None:
        m = self._manifest
        return len(m.schema) if m.write_mode == "kv" and m.schema else None

    def _tensors_per_file(self) -> int | None:
        m = self._manifest
        return len(m.schema) if m.write_mode == "batch" and m.raw.get("pack_batches") is False and m.schema else None

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
        headers_valid (every shard's header follows the format's rules),
        totals_match (the recorded totals are the shards' sums), index_matches (every index
        row names a listed shard; True without an index).
        """
        shards = self._manifest.shards
        fs = self._loc.fs
        checks = {"has_manifest": True, "has_shards": len(shards) > 0, "shards_exist": True,
                  "sizes_match": True, "headers_valid": True}
        for name, _, size_in_manifest in shards:
            p = self._loc.join(name)
            if not fs.exists(p):
                checks["shards_exist"] = checks["sizes_match"] = checks["headers_valid"] = False
                continue
            size = fs.size(p)
            if size != size_in_manifest:
                checks["sizes_match"] = False
            try:
                read_header(fs, p, size)
            except HeaderError:
                checks["headers_valid"] = False
        raw = self._manifest.raw  # the totals as recorded; the parsed ones are the shards' sums
        checks["totals_match"] = (raw.get("total_samples") == self._manifest.total_samples
                                  and raw.get("total_bytes") == self._manifest.total_bytes)
        if self._index_table is not None and "file_name" in self._index_table.column_names:
            listed = {name for name, _, _ in shards}
            checks["index_matches"] = set(self._index_table.column("file_name").to_pylist()) <= listed
        else:
            checks["index_matches"] = True
        return checks

    def describe(self) -> str:
        """A summary: location, format version, shards, samples, bytes, tensors, index, schema."""
        shards = self.list_shards()
        lines = [
            f"DistributedSafetensorsDataset: {self._loc.uri}",
            f"  Format version: {self._manifest.format_version}",
            f"  Shards: {len(shards)}",
            f"  Total samples: {self._manifest.total_samples}",
            f"  Total bytes: {self._manifest.total_bytes}",
            f"  Tensors: {sum(s.num_tensors for s in shards)}",
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
        within the shard), one per file with every tensor for datasets that record no
        ``write_mode`` (the original connector's; ``__key__`` "0"), as the Spark reader reads them.
        Local shards are memory-mapped and the arrays are read-only views of the mapping.
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
        with fs.open(path, "rb") as f:
            header = _read_header(f, fs.size(path), path)
            # The writer orders tensors by dtype and name, so the tensors of one sample need not be
            # adjacent: group by sample first (header only), then read.
            groups: dict[str, list] = {}
            for t in header.tensors:
                sample = self._sample_of(t.name)
                if sample is not None:
                    groups.setdefault(sample[0], []).append((sample[1], t))
            if self._manifest.write_mode == "batch":
                groups = dict(sorted(groups.items(), key=lambda kv: int(kv[0])))
            mapped = np.memmap(path, dtype=np.uint8, mode="r") if self._loc.local and header.tensors else None
            for key, members in groups.items():
                sample = {}
                for column, t in members:
                    begin, end = header.data_start + t.begin, header.data_start + t.end
                    if mapped is not None:
                        raw = mapped[begin:end]
                    else:
                        f.seek(begin)
                        raw = np.frombuffer(f.read(end - begin), dtype=np.uint8)
                    sample[column] = raw.view(numpy_dtype(t.dtype)).reshape(t.shape)
                sample["__key__"] = key
                yield sample

    def _sample_of(self, name: str) -> tuple | None:
        """(sample key, column) of a tensor name (``format/dataset.md``), or None when it is no tensor
        of the dataset's columns."""
        m = self._manifest
        columns = list(m.schema)
        if m.write_mode == "kv":
            return parse_kv(name, columns, m.kv_separator)
        if m.write_mode == "batch":
            parsed = parse_batch(name, columns)
            return None if parsed is None else (f"{parsed[1]:06d}" if parsed[0] != name else "0", parsed[0])
        return "0", name

    # ------------------------------------------------------------------ pickling

    def __getstate__(self):
        return {"loc": self._loc, "manifest": self._manifest, "index": self._index_table, "path": self._path,
                "tensor_counts": self._tensor_counts}

    def __setstate__(self, state):
        if "loc" not in state:
            # Pickled by the original connector's package: {"path", "manifest" (a dict), "index_table"}.
            loc = locate(state["path"])
            state = {"loc": loc, "path": state["path"], "index": state.get("index_table"),
                     "manifest": parse_manifest(json.dumps(state["manifest"]).encode(), loc.uri_of(MANIFEST))}
        self._loc = state["loc"]
        self._manifest = state["manifest"]
        self._index_table = state["index"]
        self._path = state.get("path", self._loc.root)
        self._tensor_counts = state.get("tensor_counts")


def _read_index(loc: Location, manifest):
    """The tensor index as one pyarrow table, or None: the file the manifest names, else
    ``_tensor_index.parquet`` (a directory of Parquet part files, or one file in datasets of
    earlier versions)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = loc.join(manifest.index_file or INDEX)
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


__all__ = ["DistributedSafetensorsDataset", "ShardInfo", "DatasetError", "HeaderError", "numpy_dtype", "read_header",
           "MANIFEST"]
