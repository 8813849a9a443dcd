"""Python -> Java: files written by the Hugging Face library, read by safetensors-jvm.

Each file is written with safetensors.numpy.save_file (or serialize_file for F4), then the CLI's
`export` copies every tensor's stored bytes out of its mapping; they must equal arr.tobytes(),
with the same dtype string, shape, metadata (in file order) and data_offsets.
"""

import json

import ml_dtypes
import numpy as np
import pytest
from safetensors import TensorSpec, safe_open, serialize_file
from safetensors.numpy import save_file

from dtypes import NUMPY_DTYPES, SHAPES, all_dtype_tensors, sample
from helpers import cli, header_metadata, header_tensors, read_header

METADATA = {"format": "np", "written_by": "safetensors.numpy.save_file", "unicode": "ключ ✓ 😀"}


def export(path, out_dir):
    cli("export", path, "--out", out_dir)
    manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    by_name = {t["name"]: t for t in manifest["tensors"]}
    return manifest, by_name


def assert_exported(out_dir, entry, arr, dtype_name):
    assert entry["dtype"] == dtype_name
    assert entry["shape"] == list(arr.shape)
    data = (out_dir / entry["file"]).read_bytes()
    # save_file stores little-endian bytes; tobytes() of a little-endian array is exactly that.
    assert data == np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()


@pytest.fixture(scope="module")
def all_dtypes(tmp_path_factory):
    d = tmp_path_factory.mktemp("py2java")
    tensors = all_dtype_tensors(seed=1)
    # A big-endian array: save_file byte-swaps it, so the file holds little-endian bytes.
    tensors["F32.big_endian"] = np.arange(6, dtype=">f4").reshape(2, 3)
    path = d / "all_dtypes.safetensors"
    save_file(tensors, path, metadata=METADATA)
    manifest, by_name = export(path, d / "export")
    return path, tensors, manifest, by_name, d / "export"


@pytest.mark.parametrize("dtype_name", list(NUMPY_DTYPES))
def test_every_numpy_dtype_and_shape_is_read_byte_for_byte(all_dtypes, dtype_name):
    _, tensors, _, by_name, out_dir = all_dtypes
    for shape_name in SHAPES:
        name = f"{dtype_name}.{shape_name}"
        assert_exported(out_dir, by_name[name], tensors[name], dtype_name)


def test_big_endian_arrays_are_stored_little_endian(all_dtypes):
    _, tensors, _, by_name, out_dir = all_dtypes
    entry = by_name["F32.big_endian"]
    assert (out_dir / entry["file"]).read_bytes() == np.arange(6, dtype="<f4").tobytes()


def test_metadata_and_offsets_match_the_file(all_dtypes):
    path, tensors, manifest, _, _ = all_dtypes
    # Metadata in the order the file has it (the reference writes a hash map's order).
    assert list(manifest["metadata"].items()) == [tuple(kv) for kv in header_metadata(path)]
    assert manifest["metadata"] == METADATA
    # Tensors in offset order with the file's offsets.
    expected = sorted(header_tensors(path), key=lambda t: t[3])
    got = [(t["name"], t["dtype"], t["shape"], t["data_offsets"]) for t in manifest["tensors"]]
    assert got == expected
    assert len(got) == len(tensors)


def test_inspect_json_agrees_with_safe_open(all_dtypes):
    path, _, _, _, _ = all_dtypes
    info = json.loads(cli("inspect", "--json", path).stdout)
    n, _ = read_header(path)
    assert info["header_length"] == n
    assert info["data_offset"] == 8 + n
    assert info["file_size"] == path.stat().st_size
    with safe_open(path, framework="numpy") as f:
        assert sorted(t["name"] for t in info["tensors"]) == sorted(f.keys())
        assert info["metadata"] == f.metadata()
        for t in info["tensors"]:
            s = f.get_slice(t["name"])
            assert t["dtype"] == s.get_dtype()
            assert t["shape"] == s.get_shape()
            assert t["bytes"] == t["data_offsets"][1] - t["data_offsets"][0]


def test_inspect_text_lists_every_tensor(all_dtypes):
    path, tensors, _, _, _ = all_dtypes
    out = cli("inspect", path).stdout
    assert f"header length: {read_header(path)[0]:,} bytes" in out
    for name in tensors:
        assert f"  {name} " in out


def test_f4_written_through_serialize_file(tmp_path):
    packed = np.arange(12, dtype=np.uint8)  # 12 bytes = 24 F4 values
    path = tmp_path / "f4.safetensors"
    serialize_file(
        {"f4": TensorSpec(dtype="float4_e2m1fn_x2", shape=(2, 6), data_ptr=packed.ctypes.data, data_len=12)},
        str(path),
        metadata={"format": "np"},
    )
    manifest, by_name = export(path, tmp_path / "export")
    entry = by_name["f4"]
    assert (entry["dtype"], entry["shape"]) == ("F4", [2, 12])  # the binding doubles the last dim
    assert (tmp_path / "export" / entry["file"]).read_bytes() == packed.tobytes()
    assert manifest["metadata"] == {"format": "np"}


def test_many_tensors(tmp_path):
    rng = np.random.default_rng(7)
    names = list(NUMPY_DTYPES)
    tensors = {}
    for i in range(200):
        dtype_name = names[i % len(names)]
        shape = tuple(int(x) for x in rng.integers(0, 5, size=i % 4))
        tensors[f"layer.{i:03d}.{dtype_name.lower()}"] = sample(dtype_name, shape, rng)
    path = tmp_path / "many.safetensors"
    save_file(tensors, path, metadata={"count": "200"})
    manifest, by_name = export(path, tmp_path / "export")
    assert len(manifest["tensors"]) == 200
    offsets = [t["data_offsets"] for t in manifest["tensors"]]
    assert offsets == sorted(offsets)
    for name, arr in tensors.items():
        dtype_name = next(k for k, v in NUMPY_DTYPES.items() if v == arr.dtype)
        assert_exported(tmp_path / "export", by_name[name], arr, dtype_name)
    assert cli("verify", path).stdout.strip() == f"OK {path}"


def test_large_tensor(tmp_path):
    big = np.random.default_rng(3).integers(-(2**31), 2**31 - 1, size=16 * 1024 * 1024, dtype=np.int32)  # 64 MiB
    tensors = {
        "big": big.reshape(4096, 4096),
        "after": np.arange(3, dtype=np.float64),
        "before": np.ones((1, 2), dtype=ml_dtypes.bfloat16),
    }
    path = tmp_path / "large.safetensors"
    save_file(tensors, path)
    manifest, by_name = export(path, tmp_path / "export")
    assert manifest["metadata"] == {}
    for name, arr in tensors.items():
        dtype_name = next(k for k, v in NUMPY_DTYPES.items() if v == arr.dtype)
        assert_exported(tmp_path / "export", by_name[name], arr, dtype_name)
    assert by_name["big"]["data_offsets"][1] - by_name["big"]["data_offsets"][0] == 64 * 1024 * 1024


def test_verify_accepts_every_reference_file(all_dtypes, tmp_path):
    path = all_dtypes[0]
    empty = tmp_path / "no_tensors.safetensors"
    save_file({}, empty)
    only_meta = tmp_path / "only_metadata.safetensors"
    save_file({}, only_meta, metadata={"k": "v"})
    out = cli("verify", path, empty, only_meta).stdout.splitlines()
    assert out == [f"OK {path}", f"OK {empty}", f"OK {only_meta}", "3 of 3 files OK"]
