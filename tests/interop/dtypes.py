"""Which safetensors dtypes the Hugging Face library can write from Python, and sample data for each.

Probed against safetensors 0.8.0 (the version uv.lock pins), numpy 2.x and ml_dtypes 0.6.
``safetensors.numpy.save_file`` passes ``array.dtype.name`` to the Rust binding, whose table accepts:
bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, float32, float64,
bfloat16, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu,
float4_e2m1fn_x2 and complex64.

Covered here:
- all of the above that a numpy array can carry (``NUMPY_DTYPES``): bfloat16 and the five F8
  types come from ml_dtypes;
- F4, through ``float4_e2m1fn_x2``: no numpy dtype has that name (ml_dtypes' float4_e2m1fn stores
  one element per byte and is rejected as "Unknown dtype"), so the tests write it with
  ``safetensors.serialize_file`` and a ``TensorSpec`` (the call save_file makes); the binding turns
  shape [.., n] of byte pairs into F4 [.., 2n];
- F6_E2M3 and F6_E3M2 only in the Java -> Python direction: the binding has no name that writes
  them, but its reader (``safetensors.deserialize``) accepts them.

Not writable from Python with safetensors 0.8.0, and why:
- complex128, float128/longdouble: safetensors has no such dtype ("Unknown dtype");
- ml_dtypes float8_e4m3 (IEEE-style, with infinities), float8_e4m3b11fnuz, float8_e3m4, int4,
  uint4, int2, uint2, float6_e2m3fn, float6_e3m2fn, float4_e2m1fn: not in the binding's table
  (the F6 formats exist in the file format but the binding cannot name them).

Reading back into numpy: load_file and safe_open(framework="numpy") return every dtype above
except the F8 family and F4: safetensors 0.8.0 looks up ``numpy.float8_e4m3fn`` (etc.) and
``numpy.float4_e2m1fn_x2``, which numpy does not define (AttributeError). The tests alias the
ml_dtypes types into the numpy namespace to read F8 (see ``f8_numpy_aliases`` in conftest.py) and
check F4/F6 through ``safetensors.deserialize``, which returns raw bytes.
"""

import ml_dtypes
import numpy as np

# safetensors dtype -> numpy dtype, for every dtype safetensors.numpy.save_file accepts.
NUMPY_DTYPES = {
    "BOOL": np.dtype(np.bool_),
    "U8": np.dtype(np.uint8),
    "I8": np.dtype(np.int8),
    "I16": np.dtype(np.int16),
    "U16": np.dtype(np.uint16),
    "F16": np.dtype(np.float16),
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "I32": np.dtype(np.int32),
    "U32": np.dtype(np.uint32),
    "F32": np.dtype(np.float32),
    "F64": np.dtype(np.float64),
    "I64": np.dtype(np.int64),
    "U64": np.dtype(np.uint64),
    "C64": np.dtype(np.complex64),
    "F8_E4M3": np.dtype(ml_dtypes.float8_e4m3fn),
    "F8_E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "F8_E8M0": np.dtype(ml_dtypes.float8_e8m0fnu),
    "F8_E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "F8_E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz),
}

# Dtypes the numpy loaders of safetensors 0.8.0 can only return once numpy has these names.
F8_NUMPY_NAMES = {
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
    "F8_E8M0": "float8_e8m0fnu",
    "F8_E4M3FNUZ": "float8_e4m3fnuz",
    "F8_E5M2FNUZ": "float8_e5m2fnuz",
}

# Sub-byte dtypes: bits per element.
SUB_BYTE_BITS = {"F4": 4, "F6_E2M3": 6, "F6_E3M2": 6}

# The shapes every dtype is tested with: a scalar, an empty tensor, 1-D and 3-D.
SHAPES = {"scalar": (), "empty": (0, 4), "vector": (17,), "cube": (2, 3, 5)}


def sample(dtype_name: str, shape, rng: np.random.Generator) -> np.ndarray:
    """Random contents covering every bit pattern of the dtype (NaNs included); booleans are 0 or 1."""
    dt = NUMPY_DTYPES[dtype_name]
    n = int(np.prod(shape, dtype=np.int64))
    if dtype_name == "BOOL":
        return rng.integers(0, 2, size=n).astype(np.bool_).reshape(shape)
    raw = rng.bytes(n * dt.itemsize)
    return np.frombuffer(raw, dtype=dt).reshape(shape).copy()


def all_dtype_tensors(seed: int = 0) -> dict:
    """One tensor per (numpy dtype, shape), named "<DTYPE>.<shape name>"."""
    rng = np.random.default_rng(seed)
    return {
        f"{name}.{shape_name}": sample(name, shape, rng)
        for name in NUMPY_DTYPES
        for shape_name, shape in SHAPES.items()
    }
