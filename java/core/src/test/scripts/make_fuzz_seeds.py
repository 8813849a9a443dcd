#!/usr/bin/env python3
"""Writes the seed inputs of HeaderFuzzTest.readAnything from the checked-in test files.

Seeds are the input format of the fuzz test: one mode byte, then the payload.
  file_<name>    0x00 + a whole file           (format/vectors/*.json, malformed/*.safetensors)
  header_<name>  0x01 + that file's N header bytes, when the prefix fits the file
Malformed files over 1 KiB (the deeply nested ones) are left out; MalformedCorpusTest covers them.
Deterministic; run from the repository root:

    python3 java/core/src/test/scripts/make_fuzz_seeds.py

Jazzer adds crash-* files to the same directory when fuzzing finds something; keep those.
"""

import json
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[5]
OUT = ROOT / "java/core/src/test/resources/io/github/semyonsinchenko/safetensors/format/HeaderFuzzTestInputs/readAnything"
MALFORMED = ROOT / "java/core/src/test/resources/malformed"


def seeds():
    for vector in sorted((ROOT / "format/vectors").glob("*.json")):
        yield vector.stem, bytes.fromhex("".join(json.loads(vector.read_text("utf-8"))["file"]))
    for path in sorted(MALFORMED.glob("*.safetensors")):
        data = path.read_bytes()
        if len(data) <= 1024:
            yield "malformed_" + path.stem, data


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("file_*"):
        old.unlink()
    for old in OUT.glob("header_*"):
        old.unlink()
    count = 0
    for name, data in seeds():
        (OUT / ("file_" + name)).write_bytes(b"\x00" + data)
        count += 1
        if len(data) >= 8:
            (n,) = struct.unpack("<Q", data[:8])
            if 8 + n <= len(data):
                (OUT / ("header_" + name)).write_bytes(b"\x01" + data[8:8 + n])
                count += 1
    print(f"wrote {count} seeds to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
