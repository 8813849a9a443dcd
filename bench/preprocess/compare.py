#!/usr/bin/env python3
"""Compares two sampler databases file by file: byte for byte, except headwater's documented quirks.

    python3 bench/preprocess/compare.py EXPECTED_DB ACTUAL_DB [--task-order-free]

graph.bin: header, row pointers and incoming lists exactly; outgoing neighbours within a row as
multisets (Q9, headwater's unstable sort). Task files: exactly, or with --task-order-free as
multisets of seed rows (Q16, for queries without a total ORDER BY). Standard library only.
Prints one line per file and exits 1 when any differs.
"""

import argparse
import json
import sys
from array import array
from pathlib import Path


def u32s(data: bytes) -> array:
    a = array("I")
    a.frombytes(data)
    if sys.byteorder != "little":
        a.byteswap()
    return a


def compare_graph(want: bytes, got: bytes) -> str:
    if len(want) != len(got):
        return f"size {len(got)} != {len(want)}"
    w, g = u32s(want), u32s(got)
    n, e = w[0], w[1]
    col = 4 + n + 1
    if w[:col] != g[:col]:
        return "header or outgoing row pointers differ"
    ptr = w[4:col]
    for r in range(n):
        lo, hi = col + ptr[r], col + ptr[r + 1]
        if hi - lo > 1 and sorted(w[lo:hi]) != sorted(g[lo:hi]) or hi - lo == 1 and w[lo] != g[lo]:
            return f"outgoing neighbours of row {r} differ as multisets"
    if w[col + e:] != g[col + e:]:
        return "incoming row pointers or neighbours differ"
    return ""


def task_rows(data: bytes, stype: str) -> list:
    """(anchor_row, observation_time, valid, value) per seed (spec 5.3: u32 rows, i64 times, bitmap, values)."""
    n = int.from_bytes(data[0:4], "little")
    pad8 = lambda x: (x + 7) & ~7
    rows_at = 8
    times_at = pad8(rows_at + 4 * n)
    valid_at = pad8(times_at + 8 * n)
    values_at = pad8(valid_at + (n + 7) // 8)
    width = {"Numerical": 4, "Categorical": 4, "Timestamp": 4 * 15, "Boolean": 0}[stype]
    out = []
    for i in range(n):
        valid = data[valid_at + i // 8] >> (i % 8) & 1
        if width == 0:
            value = data[values_at + i // 8] >> (i % 8) & 1
        else:
            value = data[values_at + i * width:values_at + (i + 1) * width]
        out.append((data[rows_at + 4 * i:rows_at + 4 * i + 4], data[times_at + 8 * i:times_at + 8 * i + 8], valid,
                    value))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("expected", type=Path)
    ap.add_argument("actual", type=Path)
    ap.add_argument("--task-order-free", action="store_true")
    args = ap.parse_args()
    names = lambda root: sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    want_names, got_names = names(args.expected), names(args.actual)
    failed = False
    stypes = {t["name"]: t["target_stype"] for t in json.loads((args.expected / "metadata.json").read_text())["task_metadata"]}
    if want_names != got_names:
        print(f"file names differ: only expected {sorted(set(want_names) - set(got_names))},"
              f" only actual {sorted(set(got_names) - set(want_names))}")
        failed = True
    for name in want_names:
        if name not in got_names:
            continue
        want = (args.expected / name).read_bytes()
        got = (args.actual / name).read_bytes()
        if name == "graph.bin":
            problem, how = compare_graph(want, got), "equal (outgoing lists as multisets, Q9)"
        elif name.startswith("tasks/") and args.task_order_free and want != got:
            stype = stypes[Path(name).stem]
            problem = "" if len(want) == len(got) and sorted(task_rows(want, stype)) == sorted(task_rows(got, stype)) \
                else "seed rows differ as multisets"
            how = "equal as multisets of seed rows (Q16)"
        else:
            problem = "" if want == got else f"differs (sizes {len(want)} / {len(got)})"
            how = "byte-identical"
        print(f"{name}: {problem or how} ({len(want)} bytes)")
        failed |= bool(problem)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
