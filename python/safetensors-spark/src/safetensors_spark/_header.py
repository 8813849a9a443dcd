"""The header of a safetensors file, read from any open binary file (local or remote).

Why not the Hugging Face ``safetensors`` package: its Python API reads headers only of local files
(``safe_open`` takes a path and maps it), and ``deserialize`` needs the whole file in memory; this
package also reads shards on fsspec and pyarrow file systems, one ranged read for the header.

The rules are the format's (``format/format.md``), checked in the order the JVM's ``HeaderRules``
checks them, and each failure names the same rule (``HeaderError.violation`` is the name of the
JVM's ``Violation`` constant). The project's malformed corpus and positive vectors prove that both
implementations agree (``tests/test_shared_vectors.py``).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

PREFIX_BYTES = 8
MAX_HEADER_BYTES = 100_000_000
MAX_DIMENSION = 2**48 - 1
MAX_COUNT = 2**63 - 1
METADATA_KEY = "__metadata__"
FIELDS = ("dtype", "shape", "data_offsets")

# Bits per element of every safetensors dtype.
DTYPE_BITS = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8,
    "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
    "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64,
}


class HeaderError(ValueError):
    """A file breaks a rule of the format: ``violation`` (the rule's name), ``file``, ``tensor`` (or None)."""

    def __init__(self, violation: str, file: str, tensor: str | None, detail: str):
        self.violation, self.file, self.tensor = violation, file, tensor
        where = f"{file}: tensor {tensor!r}: " if tensor is not None else f"{file}: "
        super().__init__(f"{where}{violation}: {detail}")


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: str
    shape: tuple
    begin: int  # relative to the data section
    end: int


@dataclass(frozen=True)
class Header:
    data_start: int  # 8 + N: where the data section begins in the file
    tensors: tuple  # Tensor, in offset order
    metadata: dict


def read_header(f, size: int, where: str) -> Header:
    """The validated header of the file open as ``f`` (positioned anywhere), ``size`` bytes long."""
    f.seek(0)
    prefix = f.read(PREFIX_BYTES)
    if len(prefix) < PREFIX_BYTES or size < PREFIX_BYTES:
        raise HeaderError("HEADER_LENGTH_TRUNCATED", where, None, f"the file has only {min(size, len(prefix))} bytes")
    (n,) = struct.unpack("<Q", prefix)
    if n > MAX_HEADER_BYTES:
        raise HeaderError("HEADER_TOO_LARGE", where, None, f"N = {n}")
    if PREFIX_BYTES + n > size:
        raise HeaderError("HEADER_PAST_EOF", where, None, f"8 + N = {PREFIX_BYTES + n} but the file has {size} bytes")
    return parse_header(f.read(n), size, where)


def parse_header(raw: bytes, size: int, where: str) -> Header:
    """The N header bytes (after the prefix) of a file of ``size`` bytes, validated."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise HeaderError("HEADER_NOT_UTF8", where, None, f"invalid byte sequence at header byte {e.start}") from None
    body = text.strip(" ")
    if not body.startswith("{") or not body.endswith("}"):
        raise HeaderError("HEADER_NOT_JSON_OBJECT", where, None, "not one JSON object padded only with spaces")
    try:
        doc = _loads(body)
    except RecursionError:
        # Deeper than any valid header: empty the too-deep containers, so that the entry holding
        # them breaks its own rule (a shape element that is an array, ...) as it does on the JVM.
        doc = _loads(_shallow(body))
    except ValueError as e:
        raise HeaderError("HEADER_NOT_JSON_OBJECT", where, None, f"invalid JSON: {e}") from None
    _check_unique(doc, where)
    metadata, tensors = {}, []
    for name, entry in doc:
        _check_text(name, where)
        if name == METADATA_KEY:
            metadata = _metadata(entry, where)
        else:
            tensors.append(_tensor(name, entry, where))
    tensors.sort(key=lambda t: (t.begin, t.end, t.name))
    expected = 0
    for t in tensors:
        if t.begin != expected:
            rule = "OFFSET_GAP" if t.begin > expected else "OFFSET_OVERLAP"
            raise HeaderError(rule, where, t.name, f"begins at {t.begin} but the previous tensor ends at {expected}")
        expected = t.end
    need = PREFIX_BYTES + len(raw) + expected
    if size < need:
        raise HeaderError("DATA_TRUNCATED", where, None, f"header and data need {need} bytes, the file has {size}")
    if size > need:
        raise HeaderError("TRAILING_BYTES", where, None, f"{size - need} bytes after the data section, which ends at {need}")
    return Header(PREFIX_BYTES + len(raw), tuple(tensors), metadata)


def _loads(body: str):
    return json.loads(body, object_pairs_hook=_Pairs, parse_int=_integer, parse_constant=_no_constant)


def _shallow(body: str) -> str:
    """``body`` with every array or object nested deeper than a valid header's three levels emptied."""
    out, depth, i, n = [], 0, 0, len(body)
    while i < n:
        c = body[i]
        j = i + 1
        if c == '"':
            while j < n and body[j] != '"':
                j += 2 if body[j] == "\\" else 1
            j += 1
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        if depth <= 3 or (depth == 4 and c in "[{"):  # the brackets of a too-deep container stay
            out.append(body[i:j])
        i = j
    return "".join(out)


class _Pairs(list):
    """A JSON object as its (key, value) pairs, so that a repeated key is seen (json keeps the last)."""


class _NegativeZero:
    """``-0`` in the header: an integer literal the format rejects where it wants a non-negative integer."""


def _integer(literal: str):
    return _NegativeZero() if literal == "-0" else int(literal)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _check_unique(doc: _Pairs, where: str) -> None:
    seen = set()
    for name, entry in doc:
        if name in seen:
            raise HeaderError("DUPLICATE_KEY", where, name, "the key appears more than once in the header")
        seen.add(name)
        if isinstance(entry, _Pairs):
            inner = [k for k, _ in entry]
            for k in inner:
                if inner.count(k) > 1:
                    what = f'metadata key "{k}"' if name == METADATA_KEY else f'field "{k}"'
                    raise HeaderError("DUPLICATE_KEY", where, name, f"{what} appears more than once")


def _check_text(s: str, where: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise HeaderError("HEADER_NOT_UTF8", where, None,
                          f"the unpaired surrogate \\u{ord(s[e.start]):x} has no UTF-8 form") from None


def _kind(v) -> str:
    if isinstance(v, _Pairs):
        return "an object"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, str):
        return "a string"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, _NegativeZero):
        return "negative zero"
    if isinstance(v, int):
        return "an integer"
    return "a non-integer number"


def _metadata(entry, where: str) -> dict:
    if not isinstance(entry, _Pairs):
        raise HeaderError("METADATA_NOT_STRING_MAP", where, METADATA_KEY, f"found {_kind(entry)}")
    out = {}
    for k, v in entry:
        _check_text(k, where)
        if not isinstance(v, str):
            raise HeaderError("METADATA_NOT_STRING_MAP", where, METADATA_KEY, f'the value of "{k}" is {_kind(v)}')
        _check_text(v, where)
        out[k] = v
    return out


def _tensor(name: str, entry, where: str) -> Tensor:
    if not isinstance(entry, _Pairs):
        raise HeaderError("TENSOR_FIELDS", where, name, f"found {_kind(entry)}")
    fields = dict(entry)
    for k in fields:
        if k not in FIELDS:
            raise HeaderError("TENSOR_FIELDS", where, name, f'unknown field "{k}"')
    for k in FIELDS:
        if k not in fields:
            raise HeaderError("TENSOR_FIELDS", where, name, f'missing field "{k}"')
    dtype = fields["dtype"]
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        detail = f'"{dtype}"' if isinstance(dtype, str) else f"dtype is {_kind(dtype)}"
        raise HeaderError("UNKNOWN_DTYPE", where, name, f"{detail}; known: {', '.join(DTYPE_BITS)}")
    shape = _integers(fields["shape"], "INVALID_SHAPE", name, where)
    offsets = _integers(fields["data_offsets"], "INVALID_OFFSETS", name, where)
    if len(offsets) != 2:
        raise HeaderError("INVALID_OFFSETS", where, name, f"{len(offsets)} elements instead of 2")
    begin, end = offsets
    if begin > end:
        raise HeaderError("INVALID_OFFSETS", where, name, f"begin {begin} > end {end}")
    count = 1
    for d in shape:
        count *= d
        if count > MAX_COUNT:
            raise HeaderError("SIZE_OVERFLOW", where, name, f"shape {list(shape)} has more than 2^63-1 elements")
    bits = count * DTYPE_BITS[dtype]
    if bits > MAX_COUNT:
        raise HeaderError("SIZE_OVERFLOW", where, name, f"{count} elements x {DTYPE_BITS[dtype]} bits overflows")
    if bits % 8:
        raise HeaderError("MISALIGNED_SIZE", where, name, f"{dtype} {list(shape)} is {count} x {DTYPE_BITS[dtype]} bits")
    if end - begin != bits // 8:
        raise HeaderError("SIZE_MISMATCH", where, name, f"data_offsets [{begin}, {end}] hold {end - begin} bytes, but "
                          f"{dtype} {list(shape)} needs {bits // 8}")
    return Tensor(name, dtype, tuple(shape), begin, end)


def _integers(value, rule: str, name: str, where: str) -> list:
    if isinstance(value, _Pairs) or not isinstance(value, list):
        raise HeaderError(rule, where, name, f"found {_kind(value)}")
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int):
            raise HeaderError(rule, where, name, f"element {i} is {_kind(v)}")
        if v < 0:
            raise HeaderError(rule, where, name, f"element {i} = {v} is negative")
        if v > MAX_DIMENSION:
            raise HeaderError(rule, where, name, f"element {i} = {v} exceeds 2^48-1")
    return list(value)
