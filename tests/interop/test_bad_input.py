"""Malformed files: `verify` exits 1 and names the file and the broken rule.

Each case is also given to the reference parser (safetensors.deserialize). It rejects all of them
but one: a repeated tensor key, which it accepts by keeping the last entry. safetensors-jvm rejects
duplicate keys on purpose (two readers could otherwise disagree about a tensor's bytes).
"""

import struct

import numpy as np
import pytest
from safetensors import SafetensorError, deserialize
from safetensors.numpy import save

from helpers import cli


def raw_file(header: str, data: bytes = b"", n: int | None = None) -> bytes:
    h = header.encode("utf-8")
    padded = h + b" " * (-len(h) % 8)
    return struct.pack("<Q", len(padded) if n is None else n) + padded + data


VALID = save({"w": np.arange(4, dtype=np.float32)}, metadata={"format": "np"})
U8 = '{"dtype":"U8","shape":[1],"data_offsets":[0,1]}'

# name -> (file bytes, text our message must contain, does the reference parser accept it?)
CASES = {
    "truncated_data": (VALID[:-1], "the file ends before the last tensor's data", False),
    "truncated_prefix": (VALID[:5], "shorter than the 8-byte header length prefix", False),
    "header_past_eof": (raw_file('{"a":' + U8 + "}", b"\x01", n=4096), "extends past the end of the file", False),
    "duplicate_key": (raw_file('{"a":' + U8 + ',"a":' + U8 + "}", b"\x01"), "a key appears more than once", True),
    "not_json": (raw_file("definitely not json", b""), "not a single JSON object", False),
    "trailing_bytes": (VALID + b"\x00" * 8, "bytes follow the last tensor's data", False),
    "offset_gap": (
        raw_file('{"a":' + U8 + ',"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}}', b"\x01\x02\x03"),
        "leave a gap",
        False,
    ),
    "size_mismatch": (
        raw_file('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}', b"\x00" * 4),
        "differs from the byte size implied by dtype and shape",
        False,
    ),
    "unknown_dtype": (
        raw_file('{"a":{"dtype":"F12","shape":[1],"data_offsets":[0,1]}}', b"\x01"),
        "not one of the known dtypes",
        False,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_verify_rejects_malformed_files(tmp_path, case):
    data, rule, reference_accepts = CASES[case]
    path = tmp_path / f"{case}.safetensors"
    path.write_bytes(data)
    proc = cli("verify", path, expect=1)
    line = proc.stdout.strip()
    assert line.startswith(f"FAIL {path}: "), line
    assert rule in line, line
    if reference_accepts:
        deserialize(data)
    else:
        with pytest.raises(SafetensorError):
            deserialize(data)


def test_one_bad_file_fails_the_whole_run(tmp_path):
    good = tmp_path / "good.safetensors"
    good.write_bytes(VALID)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(VALID[:-1])
    proc = cli("verify", good, bad, expect=1)
    lines = proc.stdout.splitlines()
    assert lines[0] == f"OK {good}"
    assert lines[1].startswith(f"FAIL {bad}: ")
    assert lines[2] == "1 of 2 files OK"


def test_inspect_rejects_a_malformed_file(tmp_path):
    path = tmp_path / "gap.safetensors"
    path.write_bytes(CASES["offset_gap"][0])
    proc = cli("inspect", "--json", path, expect=1)
    assert proc.stdout == ""
    assert str(path) in proc.stderr and "leave a gap" in proc.stderr
