"""Java -> Python: files written by safetensors-jvm, read by the Hugging Face library.

Raw tensor bytes plus a JSON spec go through the CLI's `pack` (SafetensorsWriter streaming from
read-only mappings of the raw files); the result is opened with safetensors.safe_open,
safetensors.numpy.load_file and safetensors.deserialize (the reference Rust parser, which
raises on any header it does not accept). With the reference layout order, the file must be
byte-identical to what safetensors.numpy.save writes for the same tensors and metadata whenever
that is deterministic (no metadata, or one key: the reference writes metadata in hash-map order).
"""

import json

import numpy as np
import pytest
from safetensors import deserialize, safe_open
from safetensors.numpy import load_file, save

from dtypes import F8_NUMPY_NAMES, NUMPY_DTYPES, SHAPES, SUB_BYTE_BITS, all_dtype_tensors
from helpers import cli, header_metadata, header_tensors

METADATA = {"format": "pt", "written_by": "safetensors-jvm pack", "z_last": "ключ ✓ 😀", "a_first": "x"}


def dtype_of(arr) -> str:
    return next(name for name, dt in NUMPY_DTYPES.items() if dt == arr.dtype)


def write_spec(directory, tensors: dict, metadata=None, raw: dict | None = None) -> str:
    """Writes each array's bytes to <i>.bin and spec.json listing them in dict order."""
    directory.mkdir(parents=True, exist_ok=True)
    entries = []
    for i, (name, arr) in enumerate(tensors.items()):
        (directory / f"{i}.bin").write_bytes(arr.tobytes())
        entries.append({"name": name, "dtype": dtype_of(arr), "shape": list(arr.shape), "file": f"{i}.bin"})
    for j, (name, (dtype, shape, data)) in enumerate((raw or {}).items()):
        (directory / f"raw{j}.bin").write_bytes(data)
        entries.append({"name": name, "dtype": dtype, "shape": list(shape), "file": f"raw{j}.bin"})
    spec = {"tensors": entries}
    if metadata is not None:
        spec["metadata"] = metadata
    path = directory / "spec.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    return path


def pack(spec, out, *flags):
    cli("pack", spec, "--out", out, *flags)
    return out


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    d = tmp_path_factory.mktemp("java2py")
    tensors = all_dtype_tensors(seed=2)
    out = pack(write_spec(d / "raw", tensors, METADATA), d / "packed.safetensors")
    return out, tensors, out.read_bytes()


@pytest.mark.parametrize("dtype_name", list(NUMPY_DTYPES))
def test_reference_parser_reads_every_dtype_and_shape(packed, dtype_name):
    _, tensors, data = packed
    parsed = {name: view for name, view in deserialize(data)}
    for shape_name in SHAPES:
        name = f"{dtype_name}.{shape_name}"
        view = parsed[name]
        assert view["dtype"] == dtype_name
        assert view["shape"] == list(tensors[name].shape)
        assert bytes(view["data"]) == tensors[name].tobytes()


@pytest.mark.parametrize("dtype_name", list(NUMPY_DTYPES))
def test_safe_open_numpy_reads_every_dtype(packed, dtype_name, f8_numpy_aliases):
    path, tensors, _ = packed
    with safe_open(path, framework="numpy") as f:
        for shape_name in SHAPES:
            name = f"{dtype_name}.{shape_name}"
            assert f.get_slice(name).get_dtype() == dtype_name
            assert f.get_slice(name).get_shape() == list(tensors[name].shape)
            arr = f.get_tensor(name)
            assert arr.dtype == NUMPY_DTYPES[dtype_name]
            assert arr.shape == tensors[name].shape
            assert arr.tobytes() == tensors[name].tobytes()


def test_load_file_reads_everything_with_metadata(packed, f8_numpy_aliases):
    path, tensors, _ = packed
    loaded = load_file(path)
    assert loaded.keys() == tensors.keys()
    for name, arr in tensors.items():
        assert loaded[name].dtype == arr.dtype, name
        assert loaded[name].shape == arr.shape, name
        assert loaded[name].tobytes() == arr.tobytes(), name
    with safe_open(path, framework="numpy") as f:
        assert f.metadata() == METADATA
        assert sorted(f.keys()) == sorted(tensors)


def test_f8_needs_the_ml_dtypes_alias_in_safetensors_0_8(packed):
    """Why the alias fixture exists. When this fails, the library finds ml_dtypes itself and the alias can go."""
    path, _, _ = packed
    missing = [n for n in F8_NUMPY_NAMES.values() if not hasattr(np, n)]
    if not missing:
        pytest.skip("numpy defines the float8 names in this environment")
    with safe_open(path, framework="numpy") as f, pytest.raises(AttributeError):
        f.get_tensor("F8_E4M3.vector")


def test_metadata_keeps_spec_order(packed):
    path, _, _ = packed
    assert [tuple(kv) for kv in header_metadata(path)] == list(METADATA.items())


def test_default_layout_is_the_reference_layout(packed):
    """Same tensors through safetensors.numpy.save: identical names, dtypes, shapes and offsets."""
    path, tensors, _ = packed
    reference = save(tensors, metadata=METADATA)
    ours = sorted(header_tensors(path), key=lambda t: t[3])
    ref_path = path.with_name("reference.safetensors")
    ref_path.write_bytes(reference)
    theirs = sorted(header_tensors(ref_path), key=lambda t: t[3])
    assert ours == theirs
    # Only the metadata order may differ (the reference's is a hash map's); so may the header length.
    n = len(reference)
    assert path.read_bytes()[-64:] == reference[n - 64 :]


def test_sub_byte_dtypes(tmp_path):
    """F4 and both F6 formats: no numpy dtype carries them, so the reference parser checks the bytes."""
    raw = {
        "f4": ("F4", (2, 6), bytes(range(6))),  # 12 elements x 4 bits
        "f6_e2m3": ("F6_E2M3", (8,), bytes(range(10, 16))),  # 8 x 6 bits = 6 bytes
        "f6_e3m2": ("F6_E3M2", (2, 2), bytes([0xAB, 0xCD, 0xEF])),  # 4 x 6 bits = 3 bytes
        "f4_empty": ("F4", (0, 3), b""),
    }
    for dtype, shape, data in raw.values():
        assert len(data) * 8 == int(np.prod(shape)) * SUB_BYTE_BITS[dtype]  # the test data itself is right
    spec = write_spec(tmp_path / "raw", {}, {"format": "np"}, raw=raw)
    out = pack(spec, tmp_path / "sub_byte.safetensors")
    parsed = {name: view for name, view in deserialize(out.read_bytes())}
    for name, (dtype, shape, data) in raw.items():
        assert parsed[name]["dtype"] == dtype
        assert parsed[name]["shape"] == list(shape)
        assert bytes(parsed[name]["data"]) == data
    with safe_open(out, framework="numpy") as f:
        assert sorted(f.keys()) == sorted(raw)
        assert f.metadata() == {"format": "np"}
        for name, (dtype, shape, _) in raw.items():
            assert f.get_slice(name).get_dtype() == dtype


def _cases():
    all_dtypes = all_dtype_tensors(seed=3)
    rng = np.random.default_rng(4)
    many = {f"t{i:03d}": rng.standard_normal(i % 7).astype(np.float32) for i in range(200)}
    unicode_names = {
        "ветка": np.arange(3, dtype=np.int16),
        "😀": np.arange(2, dtype=np.uint8),
        "\uffff": np.zeros(1, dtype=np.float32),
        'quote"back\\slash/': np.ones(2, dtype=np.float64),
        "tab\tnewline\n": np.arange(4, dtype=np.int8),
        "control\x01\x0b\x1f\x7f": np.arange(2, dtype=np.int64),
    }
    return {
        "all_dtypes_no_metadata": (all_dtypes, None),
        "all_dtypes_one_key": (all_dtypes, {"format": "pt"}),
        "one_scalar": ({"x": np.array(1.5, dtype=np.float32)}, None),
        "no_tensors": ({}, None),
        "no_tensors_one_key": ({}, {"only": "metadata"}),
        "many_tensors": (many, {"count": "200"}),
        "unicode_and_escapes": (unicode_names, {"k\n\x1f": "v\t\x0b ✓"}),
    }


CASES = _cases()


@pytest.mark.parametrize("case", list(CASES))
def test_byte_identical_to_the_reference_writer(tmp_path, case):
    tensors, metadata = CASES[case]
    reference = save(tensors, metadata=metadata)
    # Default layout from any input order: reversed here, to show the order does not matter.
    reversed_spec = write_spec(tmp_path / "reversed", dict(reversed(list(tensors.items()))), metadata)
    ours = pack(reversed_spec, tmp_path / "default.safetensors").read_bytes()
    assert ours == reference
    # --keep-order with the spec in the reference's offset order gives the same bytes.
    ref_path = tmp_path / "reference.safetensors"
    ref_path.write_bytes(reference)
    ordered = {name: tensors[name] for name, *_ in sorted(header_tensors(ref_path), key=lambda t: t[3])}
    kept = pack(write_spec(tmp_path / "ordered", ordered, metadata), tmp_path / "kept.safetensors", "--keep-order")
    assert kept.read_bytes() == reference


def test_keep_order_follows_the_spec_and_the_reference_still_reads_it(tmp_path):
    tensors = all_dtype_tensors(seed=5)
    shuffled_names = list(tensors)
    np.random.default_rng(6).shuffle(shuffled_names)
    shuffled = {name: tensors[name] for name in shuffled_names}
    out = pack(write_spec(tmp_path / "raw", shuffled, {"format": "pt"}), tmp_path / "kept.safetensors",
               "--keep-order")
    by_offset = [name for name, *_ in sorted(header_tensors(out), key=lambda t: t[3])]
    # Equal-sized empty tensors share an offset; among them the order is not observable.
    nonempty = [n for n in shuffled_names if tensors[n].nbytes > 0]
    assert [n for n in by_offset if tensors[n].nbytes > 0] == nonempty
    assert out.read_bytes() != save(tensors, metadata={"format": "pt"})
    parsed = {name: view for name, view in deserialize(out.read_bytes())}
    for name, arr in tensors.items():
        assert bytes(parsed[name]["data"]) == arr.tobytes()
