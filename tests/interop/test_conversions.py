"""The SIMD kernels (through `safetensors-cli convert`) against numpy and ml_dtypes, bit for bit.

Every 16-bit pattern for the widening and 16-to-16 conversions; for F32 narrowing, every special
class plus a million random bit patterns. NaNs are compared against the documented rule
(native/include/safetensors_native.h): numpy's own NaN results depend on whether its build uses
hardware conversions, so they are not a reference for NaN payloads.
"""

import ml_dtypes
import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import save_file

from helpers import cli

BF16 = np.dtype(ml_dtypes.bfloat16)
# The references cast NaN and out-of-range values on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:(invalid value|overflow) encountered in cast:RuntimeWarning")


def convert(tmp_path, tensors: dict, to: str, *extra) -> dict:
    src = tmp_path / "in.safetensors"
    out = tmp_path / f"out-{to}.safetensors"
    save_file(tensors, str(src))
    cli("convert", src, out, "--to", to, *extra)
    with safe_open(str(out), framework="numpy") as f:
        return {k: f.get_tensor(k) for k in f.keys()}


def all16() -> np.ndarray:
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def f32_inputs(seed=7) -> np.ndarray:
    """Specials, rounding ties for BF16 and F16 at every exponent, F16 overflow/subnormal edges, random bits."""
    special = [0, 0x80000000, 1, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000, 0xFF800000,
               0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA00000, 0xFF800001, 0x3F800000]
    exps = np.arange(1, 255, dtype=np.uint32) << 23
    bf16_ties = np.concatenate([exps | 0x8000, exps | 0x18000, exps | 0x7FFF, exps | 0x8001])
    f16_ties = np.concatenate([exps | 0x1000, exps | 0x3000, exps | 0x0FFF, exps | 0x1001])
    edges = np.array([65504.0, 65519.996, 65520.0, 65536.0, 2.0**-24, 2.0**-25, 1.5 * 2.0**-25,
                      2.0**-14, 2.0**-14 * (1 - 2.0**-11)], dtype=np.float32).view(np.uint32)
    rng = np.random.default_rng(seed)
    rand = rng.integers(0, 1 << 32, size=1_000_000, dtype=np.uint64).astype(np.uint32)
    bits = np.concatenate([np.array(special, dtype=np.uint32), bf16_ties, f16_ties, edges, rand])
    return np.concatenate([bits, bits ^ 0x80000000]).view(np.float32)


def assert_same_bits(got: np.ndarray, want: np.ndarray, nan: np.ndarray, rule: np.ndarray):
    """Non-NaN inputs equal numpy's bits; NaN inputs equal the documented rule."""
    width = {2: np.uint16, 4: np.uint32}[got.dtype.itemsize]
    g, w = got.view(width), want.view(width)
    bad = np.flatnonzero((g != w) & ~nan)
    assert bad.size == 0, f"{bad.size} non-NaN mismatches, first at {bad[:5]}: got {g[bad[:5]]}, want {w[bad[:5]]}"
    bad_nan = np.flatnonzero((g != rule) & nan)
    assert bad_nan.size == 0, f"{bad_nan.size} NaN results break the rule, first {g[bad_nan[:5]]} vs {rule[bad_nan[:5]]}"


def test_f16_and_bf16_to_f32_exhaustive(tmp_path):
    bits = all16()
    got = convert(tmp_path, {"h": bits.view(np.float16), "b": bits.view(BF16)}, "F32")
    for name, src, want in [("h", bits.view(np.float16), bits.view(np.float16).astype(np.float32)),
                            ("b", bits.view(BF16), bits.view(BF16).astype(np.float32))]:
        nan = np.isnan(src.astype(np.float32))
        if name == "h":  # exact widening: sign, exponent all ones, payload shifted, no quieting
            rule = ((bits.astype(np.uint32) & 0x8000) << 16) | 0x7F800000 | ((bits.astype(np.uint32) & 0x3FF) << 13)
        else:
            rule = bits.astype(np.uint32) << 16
        assert got[name].dtype == np.float32
        assert_same_bits(got[name], want, nan, rule)


def test_f32_to_bf16_rne_and_trunc(tmp_path):
    x = f32_inputs()
    u = x.view(np.uint32)
    nan = np.isnan(x)
    rule = (((u >> 16) & 0x8000) | 0x7FC0).astype(np.uint16)
    got = convert(tmp_path, {"x": x}, "BF16")["x"]
    assert_same_bits(got, x.astype(BF16), nan, rule)
    got_t = convert(tmp_path, {"x": x}, "BF16", "--rounding", "trunc")["x"]
    assert_same_bits(got_t, (u >> 16).astype(np.uint16).view(BF16), nan, rule)


def rtz_f16(x: np.ndarray) -> np.ndarray:
    """Round toward zero to float16 from numpy's correctly rounded result."""
    r = x.astype(np.float16)
    over = np.abs(r.astype(np.float32)) > np.abs(x)
    r[over] = np.nextafter(r[over], np.float16(0))
    return r


def test_f32_to_f16_rne_and_trunc(tmp_path):
    x = f32_inputs()
    u = x.view(np.uint32)
    nan = np.isnan(x)
    rule = (((u >> 16) & 0x8000) | 0x7E00 | ((u & 0x7FFFFF) >> 13)).astype(np.uint16)
    with np.errstate(over="ignore"):
        want, want_t = x.astype(np.float16), rtz_f16(x)
    assert_same_bits(convert(tmp_path, {"x": x}, "F16")["x"], want, nan, rule)
    assert_same_bits(convert(tmp_path, {"x": x}, "F16", "--rounding", "trunc")["x"], want_t, nan, rule)


def test_f16_bf16_cross_conversions_exhaustive(tmp_path):
    bits = all16()
    h, b = bits.view(np.float16), bits.view(BF16)
    got_b = convert(tmp_path, {"h": h}, "BF16")["h"]
    hb = h.astype(np.float32)  # exact, then one RNE rounding
    f16_nan_rule = (((bits & 0x8000) | 0x7FC0)).astype(np.uint16)
    assert_same_bits(got_b, hb.astype(BF16), np.isnan(hb), f16_nan_rule)
    got_h = convert(tmp_path, {"b": b}, "F16")["b"]
    bf = b.astype(np.float32)
    bu = bf.view(np.uint32)
    bf16_nan_rule = (((bu >> 16) & 0x8000) | 0x7E00 | ((bu & 0x7FFFFF) >> 13)).astype(np.uint16)
    with np.errstate(over="ignore"):
        assert_same_bits(got_h, bf.astype(np.float16), np.isnan(bf), bf16_nan_rule)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                   np.uint64, np.float64])
def test_widening_to_f32_matches_astype(tmp_path, dtype):
    rng = np.random.default_rng(11)
    if np.dtype(dtype).kind == "f":
        x = np.concatenate([rng.standard_normal(100_000) * 1e30, [0.0, -0.0, np.inf, -np.inf, 3.4e38, 3.5e38,
                                                                   1e-46, np.nan, 2.0**-149 * 0.5]]).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=100_000, dtype=dtype, endpoint=True)
        x = np.concatenate([x, np.array([info.min, info.max, 0, 1 << min(24, info.bits - 2)], dtype=dtype)])
    got = convert(tmp_path, {"x": x}, "F32", "--widen-integers")["x"]
    want = x.astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(got.view(np.uint32)[~nan], want.view(np.uint32)[~nan])
    assert np.isnan(got[nan]).all()
