"""Writes the Hugging Face-written test files for the Spark read tests (run once; outputs are checked in).

    st_uv run --with safetensors --with numpy --with ml_dtypes python gen.py

Writes plain/model_a.safetensors, plain/model_b.safetensors and expected.json (per file and tensor:
dtype, shape and the hex of the raw little-endian bytes as numpy holds them).
"""
import json
import os

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))


def tensors_a():
    return {
        "weight": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
        "bias": (np.arange(4, dtype=np.float32) - 1.5).astype(ml_dtypes.bfloat16),
        "half": np.array([[0.5, -2.0], [65504.0, 1e-4]], dtype=np.float16),
        "ids": np.array([-1, 2**40], dtype=np.int64),
        "mask": np.array([True, False, True]),
        "u8": np.arange(5, dtype=np.uint8) * 50,
        "scalar": np.array(3.25, dtype=np.float64),
    }


def tensors_b():
    return {
        "weight": -np.arange(12, dtype=np.float32).reshape(3, 4),
        "extra": np.array([1.0], dtype=np.float64),
    }


def main():
    os.makedirs(os.path.join(HERE, "plain"), exist_ok=True)
    expected = {}
    for name, ts in (("model_a.safetensors", tensors_a()), ("model_b.safetensors", tensors_b())):
        save_file(ts, os.path.join(HERE, "plain", name), metadata={"format": "np"})
        expected[name] = {
            k: {
                "dtype": {"float32": "F32", "bfloat16": "BF16", "float16": "F16", "int64": "I64", "bool": "BOOL",
                          "uint8": "U8", "float64": "F64"}[str(v.dtype)],
                "shape": list(v.shape),
                "hex": np.ascontiguousarray(v).astype(v.dtype.newbyteorder("<")).tobytes().hex(),
            }
            for k, v in ts.items()
        }
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
