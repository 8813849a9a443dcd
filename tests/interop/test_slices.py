"""Slices and conversions (`safetensors-cli slice`) against numpy slicing of the same file.

A file written by `safetensors.numpy.save_file` holds tensors of every dtype numpy can carry, of
rank 0 to 5. Hundreds of random numpy basic indexes (integers, negative ones, ranges with negative
bounds and steps, `...`, trailing dimensions left out) go to one `slice --spec` run, mapped and
again with `--from-memory`; each output must equal `arr[index]` byte for byte, with its shape. The
float widenings of slices (to F32 and F64) must equal numpy/ml_dtypes `astype` on the sliced array
(bit for bit; NaNs by position and sign, since numpy's NaN payloads depend on its build), and every
8-bit float pattern must widen to ml_dtypes' value. Out-of-bounds slices exit 2 naming the tensor,
the dimension and the index.
"""

import random

import ml_dtypes
import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from dtypes import F8_NUMPY_NAMES, NUMPY_DTYPES, sample
from helpers import cli

# numpy dtype -> the widenings the CLI is asked for.
WIDENS_TO_F32 = {"F16", "BF16", "I8", "U8", "I16", "U16", *F8_NUMPY_NAMES}
WIDENS_TO_F64 = WIDENS_TO_F32 | {"F32", "I32", "U32", "I64", "U64"}
pytestmark = pytest.mark.filterwarnings("ignore:(invalid value|overflow) encountered in cast:RuntimeWarning")


def random_shape(rng: random.Random, rank: int) -> tuple:
    return tuple(rng.choice([1, 2, 3, 4, 5, 7]) if rank >= 4 else rng.randint(1, 9) for _ in range(rank))


def random_index(rng: random.Random, n: int):
    """One numpy index for a dimension of size n, and its text: an int, a range, or a stepped range."""
    kind = rng.randrange(6)
    if kind == 0 and n > 0:
        i = rng.randrange(n) - (n if rng.random() < 0.5 else 0)
        return i, str(i)
    if kind == 1:
        return slice(None), ":"
    start = rng.randrange(n)
    stop = rng.randint(start + 1, n)
    step = rng.choice([1, 1, 2, 3, max(1, n - 1)])
    start_v = start - n if rng.random() < 0.25 else start
    stop_v = None if stop == n and rng.random() < 0.3 else stop
    text = f"{'' if start_v == 0 and rng.random() < 0.3 else start_v}:{'' if stop_v is None else stop_v}"
    if step != 1 or rng.random() < 0.2:
        text += f":{step}"
    return slice(start_v, stop_v, step), text


def random_slice(rng: random.Random, shape: tuple):
    """A numpy index tuple and the same slice as text; sometimes an Ellipsis between leading and trailing indexes."""
    rank = len(shape)
    ellipsis = rank > 0 and rng.random() < 0.15
    lead = rng.randint(0, rank) if rng.random() < 0.3 else max(0, rank - rng.randrange(2))
    trail = rng.randint(0, rank - lead) if ellipsis else 0
    idx, text = [], []
    for d in range(lead):
        i, t = random_index(rng, shape[d])
        idx.append(i)
        text.append(t)
    if ellipsis:
        idx.append(Ellipsis)
        text.append("...")
        for d in range(rank - trail, rank):
            i, t = random_index(rng, shape[d])
            idx.append(i)
            text.append(t)
    return tuple(idx), "[" + ", ".join(text) + "]"


@pytest.fixture(scope="module")
def sliced(tmp_path_factory, f8_aliases_module):
    """One source file, one spec of random slices (some converted), sliced mapped and from memory."""
    d = tmp_path_factory.mktemp("slices")
    rng = random.Random(20261127)
    nprng = np.random.default_rng(5)
    tensors, cases = {}, []
    for dtype_name in NUMPY_DTYPES:
        for rank in range(6):
            name = f"{dtype_name}.r{rank}"
            tensors[name] = sample(dtype_name, random_shape(rng, rank), nprng)
            for k in range(8):
                idx, text = random_slice(rng, tensors[name].shape)
                target = ""
                if k % 4 == 1 and dtype_name in WIDENS_TO_F32:
                    target = "F32"
                elif k % 4 == 2 and dtype_name in WIDENS_TO_F64:
                    target = "F64"
                cases.append((f"case{len(cases)}", name, idx, text, target))
    src = d / "in.safetensors"
    save_file(tensors, str(src))
    spec = d / "spec.tsv"
    spec.write_text("".join(f"{c[0]}\t{c[1]}\t{c[3]}\t{c[4]}\n" for c in cases), encoding="utf-8")
    outputs = {}
    for mode, extra in (("mapped", ()), ("memory", ("--from-memory",))):
        out = d / f"out-{mode}.safetensors"
        cli("slice", src, out, "--spec", spec, *extra)
        outputs[mode] = load_file(str(out))
    return tensors, cases, outputs


@pytest.fixture(scope="module")
def f8_aliases_module():
    """safetensors 0.8.0's numpy loader looks up numpy.float8_* names; give it ml_dtypes' types."""
    mp = pytest.MonkeyPatch()
    for name in F8_NUMPY_NAMES.values():
        mp.setattr(np, name, getattr(ml_dtypes, name), raising=False)
    yield
    mp.undo()


def assert_same_floats(got: np.ndarray, want: np.ndarray, what: str):
    assert got.dtype == want.dtype and got.shape == want.shape, what
    bits = np.uint32 if got.dtype == np.float32 else np.uint64
    g, w = got.reshape(-1), want.reshape(-1)
    nan = np.isnan(w)
    assert np.array_equal(np.isnan(g), nan), what
    assert np.array_equal(np.signbit(g[nan]), np.signbit(w[nan])), what + ": NaN signs"
    assert np.array_equal(g[~nan].view(bits), w[~nan].view(bits)), what


@pytest.mark.parametrize("mode", ["mapped", "memory"])
def test_random_slices_of_every_dtype_and_rank_equal_numpy(sliced, mode):
    tensors, cases, outputs = sliced
    got = outputs[mode]
    checked = strided = 0
    for out_name, name, idx, text, target in cases:
        arr = tensors[name]
        want = arr[idx]
        what = f"{name} {arr.dtype} {arr.shape}{text} -> {target or 'same dtype'} ({mode})"
        if target == "":
            assert got[out_name].dtype == want.dtype, what
            assert got[out_name].shape == want.shape, what
            assert np.ascontiguousarray(got[out_name]).tobytes() == np.ascontiguousarray(want).tobytes(), what
            strided += want.size > 1 and not want.flags.c_contiguous
        else:
            assert_same_floats(got[out_name], want.astype(np.float32 if target == "F32" else np.float64), what)
        checked += 1
    assert checked == len(cases) and checked >= 19 * 6 * 8
    assert strided > 100, f"only {strided} non-contiguous slices"


def test_every_eight_bit_float_pattern_widens_to_ml_dtypes(tmp_path, f8_aliases_module):
    tensors = {f8: np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, np_name))
               for f8, np_name in F8_NUMPY_NAMES.items()}
    src, out = tmp_path / "f8.safetensors", tmp_path / "f32.safetensors"
    save_file(tensors, str(src))
    cli("slice", src, out, "--to", "F32")
    got = load_file(str(out))
    for f8, arr in tensors.items():
        want = arr.astype(np.float32)
        assert_same_floats(got[f8], want, f8)
        nan = np.isnan(want)
        # Where ml_dtypes has no payload to keep (one NaN pattern per sign), the bits are equal too.
        if f8 != "F8_E5M2":
            assert np.array_equal(got[f8].view(np.uint32), want.view(np.uint32)), f8
        assert nan.sum() in (1, 2, 6), f8


def test_out_of_bounds_slices_name_the_tensor_dimension_and_index(tmp_path):
    src = tmp_path / "w.safetensors"
    save_file({"model.w": np.zeros((4, 6), dtype=np.float32)}, str(src))
    proc = cli("slice", src, tmp_path / "o.safetensors", "--slice", "model.*=[:, 2:9]", expect=2)
    assert 'tensor "model.w" [4, 6]: dimension 1 (size 6): 2:9 stops outside [0, 6]' in proc.stderr
    proc = cli("slice", src, tmp_path / "o.safetensors", "--slice", "[0, 0, 0]", expect=2)
    assert "has 2 dimension(s), but slice [0, 0, 0] has 3 indexes" in proc.stderr
    assert not (tmp_path / "o.safetensors").exists()


def test_globs_select_tensors_and_slices_like_fnmatch(tmp_path):
    rng = np.random.default_rng(1)
    tensors = {f"model.layers.{i}.{p}": rng.standard_normal((8, 4)).astype(np.float32)
               for i in range(3) for p in ("mlp.weight", "norm.weight")}
    src, out = tmp_path / "m.safetensors", tmp_path / "o.safetensors"
    save_file(tensors, str(src))
    cli("slice", src, out, "--tensors", "model.layers.[12].*", "--slice", "*.mlp.*=[2:6]", "--slice", "[::2, 1]")
    got = load_file(str(out))
    assert sorted(got) == sorted(k for k in tensors if not k.startswith("model.layers.0."))
    for k, v in got.items():
        want = tensors[k][2:6] if ".mlp." in k else tensors[k][::2, 1]
        assert np.array_equal(v, want), k
