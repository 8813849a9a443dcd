"""How numbers are shown: times, ratios, GB/s and sizes."""

from __future__ import annotations

from kernels_report.data import GIB, KIB, MIB


def fmt_time(ns: float | None) -> str:
    if ns is None:
        return "—"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns / 1e6:.2f} ms"


def fmt_ratio(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def fmt_gbs(b: int, ns: float | None) -> str:
    return "—" if not ns else f"{b / ns:.2f}"


def fmt_size(b: int) -> str:
    if b >= GIB and b % GIB == 0:
        return f"{b // GIB} GiB"
    if b >= MIB and b % MIB == 0:
        return f"{b // MIB} MiB"
    if b >= KIB and b % KIB == 0:
        return f"{b // KIB} KiB"
    return f"{b} B"
