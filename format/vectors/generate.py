#!/usr/bin/env python3
"""Writes the positive test vectors in this directory: one JSON file per vector.

An independent, standard-library-only model of the writer's layout rules (format/format.md,
"Writing"), so the vectors do not come from the Java writer they test. Deterministic; run from the
repository root:

    python3 format/vectors/generate.py

Each vector file holds:
  description   what the vector shows
  writer_exact  true when a conforming writer given `metadata` and `tensors` (in that order) must
                produce exactly `file`; false for files only a reader must accept
  metadata      the __metadata__ map, in the order it appears in the header
  tensors       the writer's input, in the order it is given: name, dtype, shape, data (hex)
  file          the whole file as hex, 16 bytes per line
"""

import json
import struct
from pathlib import Path

# Declaration order of the dtypes = ascending alignment; the writer sorts by the reverse.
DTYPES = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
          "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64",
          "F64", "I64", "U64"]
BITS = {"F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8,
        "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16,
        "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64,
        "U64": 64}


def nbytes(dtype, shape):
    count = 1
    for d in shape:
        count *= d
    bits = count * BITS[dtype]
    assert bits % 8 == 0, (dtype, shape)
    return bits // 8


def build(metadata, tensors, pad=True, sort=True):
    """The file bytes: 8-byte LE length, compact JSON (metadata first), 0x20 padding, data."""
    order = list(tensors)
    if sort:
        # Descending alignment, then name by UTF-8 bytes (not UTF-16 code units).
        order.sort(key=lambda t: (-DTYPES.index(t["dtype"]), t["name"].encode("utf-8")))
    header = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    offset = 0
    for t in order:
        n = len(t["data"])
        assert n == nbytes(t["dtype"], t["shape"]), t["name"]
        header[t["name"]] = {"dtype": t["dtype"], "shape": t["shape"],
                             "data_offsets": [offset, offset + n]}
        offset += n
    # Compact, raw UTF-8, control characters escaped with lowercase hex: what serde_json writes.
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(t["data"] for t in order)


def tensor(name, dtype, shape, data):
    return {"name": name, "dtype": dtype, "shape": shape, "data": bytes(data)}


def pattern(n, start=0):
    return bytes((start + 7 * i) & 0xFF for i in range(n))


def vectors():
    f32 = struct.pack("<6f", 0, 1, 2, 3, 4, 5)
    yield ("reference_doc_example",
           "The reference's reading example: a 60-byte header with no padding. Readers accept it; "
           "writers pad the header to 64 bytes, so no writer produces this file.",
           False, {}, [tensor("test", "I32", [2, 2], bytes(16))], dict(pad=False))
    yield ("reference_f32",
           "One F32 tensor [1, 2, 3]; the 64-byte header needs no padding. Byte-identical to the "
           "reference writer's output for this input.",
           True, {}, [tensor("attn.0", "F32", [1, 2, 3], f32)], {})
    yield ("reference_forced_alignment",
           "A shorter name than reference_f32 makes the JSON 65 bytes; seven 0x20 bytes pad it to "
           "72 so the F32 data starts 8-byte aligned.",
           True, {}, [tensor("attn0", "F32", [1, 1, 2, 3], f32)], {})
    yield ("reference_f4",
           "Two F4 elements share one byte.",
           True, {}, [tensor("attn.0", "F4", [1, 2], b"\x00")], {})
    yield ("empty",
           "No tensors and no metadata: {} padded to 8 bytes.",
           True, {}, [], {})
    yield ("empty_with_metadata",
           "Only __metadata__.",
           True, {"framework": "pt"}, [], {})
    yield ("scalar",
           "A rank-0 tensor: shape [] holds one element.",
           True, {}, [tensor("pi", "F64", [], struct.pack("<d", 3.141592653589793))], {})
    yield ("empty_tensors",
           "Tensors with a zero dimension take no bytes; their offsets are [x, x].",
           True, {}, [tensor("b", "U8", [2], b"\x01\x02"), tensor("e", "F32", [0, 3], b""),
                      tensor("z", "I64", [2, 0, 5], b"")], {})
    yield ("layout_order",
           "Input in scrambled order. Layout: descending alignment (reverse declaration order), "
           "then name by UTF-8 bytes: U+FF21 sorts before U+1F600 although its UTF-16 code unit "
           "is larger. Metadata keeps its given order.",
           True, {"zeta": "last key first", "alpha": "1"},
           [tensor("b", "U8", [3], pattern(3)), tensor("\U0001F600", "I16", [1], pattern(2, 1)),
            tensor("a", "F64", [1], pattern(8, 2)), tensor("\uFF21", "I16", [2], pattern(4, 3)),
            tensor("c", "BF16", [2], pattern(4, 4)), tensor("B", "U8", [1], pattern(1, 5)),
            tensor("d", "BOOL", [2], b"\x01\x00"), tensor("e", "F4", [2], pattern(1, 6))],
           {})
    yield ("sub_byte",
           "Sub-byte dtypes with element counts that fill whole bytes.",
           True, {},
           [tensor("f4", "F4", [2, 2], pattern(2)), tensor("f6a", "F6_E2M3", [4], pattern(3, 1)),
            tensor("f6b", "F6_E3M2", [4, 1], pattern(3, 2)), tensor("bool", "BOOL", [3], b"\x01\x00\x01"),
            tensor("f8", "F8_E4M3", [2], pattern(2, 3))], {})
    yield ("escapes",
           "Strings that need escaping: quotes, backslash, the short escapes, other control "
           "characters as lowercase \\u00xx, and non-ASCII written as raw UTF-8.",
           True, {"quote\"back\\slash": "tab\tnewline\ncr\rbs\bff\f", "ctl": "\x01\x1f\x7f",
                  "unicode": "caf\u00e9 \u2028 \U0001F600"},
           [tensor("model.layers.0/weight w", "U8", [1], b"\x2a"),
            tensor("line\nbreak", "U8", [1], b"\x2b")], {})
    every = []
    for i, d in enumerate(DTYPES):
        shape = [4] if BITS[d] == 6 else [2]
        every.append(tensor("t_" + d.lower(), d, shape, pattern(nbytes(d, shape), i)))
    yield ("every_dtype",
           "One tensor of each of the 22 dtypes, given in declaration order.",
           True, {"format": "pt"}, every, {})


def main():
    out = Path(__file__).resolve().parent
    for name, description, writer_exact, metadata, tensors, opts in vectors():
        data = build(metadata, tensors, **opts)
        def dump(value):
            return json.dumps(value, ensure_ascii=False)

        # One tensor and one 16-byte row per line keeps the files readable and diffs small.
        rows = [dump(data[i:i + 16].hex()) for i in range(0, len(data), 16)]
        items = [dump({"name": t["name"], "dtype": t["dtype"], "shape": t["shape"],
                       "data": t["data"].hex()}) for t in tensors]
        text = ("{\n"
                f'  "description": {dump(description)},\n'
                f'  "writer_exact": {dump(writer_exact)},\n'
                f'  "metadata": {dump(metadata)},\n'
                '  "tensors": [' + ",".join("\n    " + i for i in items) + ("\n  " if items else "") + "],\n"
                '  "file": [' + ",".join("\n    " + r for r in rows) + "\n  ]\n"
                "}\n")
        json.loads(text)  # well-formed
        (out / (name + ".json")).write_text(text, encoding="utf-8")
        print(f"{name}.json: {len(data)} bytes")


if __name__ == "__main__":
    main()
