"""The targets: each a list of checks of a measured value against what it needs, and its verdict."""

from __future__ import annotations

import math

from kernels_report.data import MIB, Data, conv_bytes
from kernels_report.formatting import fmt_ratio, fmt_size, fmt_time
from kernels_report.stats import ratio, rel_err


class Check:
    """One line of the target table: a measured value against what the target needs.

    kind "min": value >= need (a ratio, shown as 1.23×); "max": value <= need (a share, shown as 4%);
    "noise": the guard's cost: MET when its paired cost is no larger than the cell's JMH error
    (guard_verdict).
    """

    def __init__(self, what: str, value: float | None, need: float, kind: str = "min", shown: str | None = None):
        self.what, self.value, self.need, self.kind, self.shown = what, value, need, kind, shown

    def met(self) -> bool | None:
        if self.kind == "info":
            return True  # shown beside the target, not part of it
        if self.value is None:
            return None
        return self.value <= self.need if self.kind in ("max", "noise") else self.value >= self.need

    def measured(self) -> str:
        if self.shown is not None:
            return self.shown
        if self.value is None:
            return "—"
        return f"{100 * self.value:.1f}%" if self.kind == "max" else fmt_ratio(self.value)

    def needed(self) -> str:
        if self.kind == "max":
            return f"≤ {100 * self.need:.0f}%"
        if self.kind == "noise":
            return "within the noise (< 10%)"
        if self.kind == "info":
            return f"({self.need:g}×)"
        return f"{self.need:g}×"


def guard_verdict(g: dict) -> tuple[float | None, str]:
    """(|cost| / noise, text): at most 1 when the guard's paired cost is within the noise of the cell,
    the larger relative JMH error of its two sides (what one kernel benchmark of this report can
    tell apart). No value when that noise exceeds 10% (then anything would be "within noise"), nor
    when the cost's own interval is wider than the noise (then the pairing cannot tell)."""
    noise = max(g["on_err"] / g["on"], g["off_err"] / g["off"])
    text = (f"{100 * g['cost']:+.2f}% ± {100 * g['cost_err']:.2f}% ({g['iterations']} iterations;"
            f" noise ±{100 * noise:.1f}%)")
    if math.isnan(noise) or noise > 0.10:
        return None, text + ", too noisy to tell"
    if math.isnan(g["cost_err"]) or g["cost_err"] > noise:
        return None, text + ", the cost's interval is wider than the noise"
    return abs(g["cost"]) / noise, text


def vs_copy(d: Data, op: str, size: int, nbytes: int, side: str) -> Check:
    """The native off-heap conversion against a copy of the nbytes it reads or writes (side): at least 0.8x."""
    r = d.k(op, "native", "offheap", size)
    return Check(f"{op} native offheap vs copy of the {fmt_size(nbytes)} it {side}",
                 ratio(d.copy_ns("offheap", nbytes), r["ns"] if r else None), 0.8)


def targets(d: Data) -> list[tuple[str, list[Check]]]:
    """(target, checks); MET when every check is met."""
    size = 64 * MIB
    res = []
    checks = [vs_copy(d, op, size, conv_bytes(op, size)[1], "writes") for op in ("BF16_TO_F32", "F16_TO_F32")]
    res.append(("64 MiB BF16→F32 and F16→F32 native ≥ 0.8× the same-byte copy", checks))
    checks = []
    for op, who in (("BF16_TO_F32", "ml_dtypes"), ("F16_TO_F32", "numpy")):
        r = d.k(op, "native", "offheap", size)
        checks.append(Check(f"{op} native offheap vs {who} astype", ratio(d.np_ns(op, "astype", size),
                                                                         r["ns"] if r else None), 3.0))
    res.append(("64 MiB BF16→F32 and F16→F32 native ≥ 3× ml_dtypes/numpy astype", checks))
    checks = []
    for memory in ("offheap", "heap"):
        r = d.k("F16_TO_F32", "native", memory, size)
        j = d.k("F16_TO_F32", "jdk", memory, size)
        checks.append(Check(f"F16_TO_F32 native vs JDK Float.float16ToFloat loop, {memory}",
                            ratio(j["ns"] if j else None, r["ns"] if r else None), 1.5))
    res.append(("64 MiB native F16→F32 ≥ 1.5× the JDK Float.float16ToFloat loop", checks))
    checks = [vs_copy(d, op, size, conv_bytes(op, size)[0], "reads") for op in ("F32_TO_BF16_RNE", "F32_TO_F16_RNE")]
    res.append(("64 MiB F32→BF16 and F32→F16 (RNE) native ≥ 0.8× a copy of the bytes they read", checks))
    checks = []
    for idx in ("I64", "U32"):
        r = d.k(f"GATHER_{idx}", "native-2t", "offheap-thp", "gather")
        np_err = d.np_mean_err(f"GATHER_{idx}", "take", "gather")
        np_mean = d.np_ns(f"GATHER_{idx}", "take", "gather", "mean_s")
        np_text = "" if np_err is None else f" (numpy's mean {fmt_time(np_mean)} ± {100 * np_err:.0f}%)"
        checks.append(Check(f"gather split over 2 threads (Kernels.gather with an executor), table in library huge"
                            f" pages (HugePages.allocate), {idx.lower()} indices, vs numpy.take (one thread):"
                            f" mean ÷ mean over the same rounds{np_text}",
                            ratio(d.np_ns(f"GATHER_{idx}", "take", "gather", "mean_s"), r["ns"] if r else None), 3.0))
        checks.append(Check("the same gather's JMH error, as a share of its mean", rel_err(r), 0.10, "max"))
        checks.append(Check("(stricter, the form of earlier reports) numpy's best sample ÷ the same mean",
                            ratio(d.np_ns(f"GATHER_{idx}", "take", "gather"), r["ns"] if r else None), 3.0, "info"))
        r1 = d.k(f"GATHER_{idx}", "native", "offheap-thp", "gather")
        e1 = rel_err(r1)
        checks.append(Check(f"(for comparison, not the target's form) the single-threaded gather, same table,"
                            f" {idx.lower()}{'' if e1 is None else f' (JMH error ±{100 * e1:.0f}%)'}",
                            ratio(d.np_ns(f"GATHER_{idx}", "take", "gather", "mean_s"), r1["ns"] if r1 else None),
                            3.0, "info"))
    res.append(("gather (1 GiB F16 table [V,256], 65,536 random rows) ≥ 3× numpy.take, JMH error < 10%; read on"
                " the parallel gather (2 threads, this machine's cores), the single-threaded ratio beside it",
                checks))
    if d.guard:
        checks = []
        for (op, size), g in sorted(d.guard.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            v, text = guard_verdict(g)
            checks.append(Check(f"{op} native offheap {fmt_size(size)}: guard on vs off", v, 1.0, "noise", text))
        res.append(("native fault guard (SIGBUS/SIGSEGV handler) costs the conversions nothing beyond noise",
                    checks))
    info = []
    for idx in ("I64", "U32"):
        for path, form in (("native", "one thread"), ("native-2t", "2 threads")):
            r = d.k(f"GATHER_{idx}", path, "offheap", "gather")
            e = rel_err(r)
            info.append(Check(f"gather native ({form}), table in 4 KiB pages (Arena.allocate), {idx.lower()} indices,"
                              f" vs numpy.take{'' if e is None else f' (JMH error ±{100 * e:.0f}%)'}",
                              ratio(d.np_ns(f"GATHER_{idx}", "take", "gather", "mean_s"), r["ns"] if r else None),
                              3.0))
    res.append(("(info, not the target) the same with the table in ordinary 4 KiB pages", info))
    return res


def target_forks(d: Data) -> str:
    """The text " (the target: 10 forks × 20 iterations)", from the target gather's raw data."""
    r = d.k("GATHER_I64", "native-2t", "offheap-thp", "gather")
    if not r or not r["fork_count"]:
        return ""
    return f" (the target: {r['fork_count']} fork{'s' if r['fork_count'] != 1 else ''} × {r['raw_samples']} iterations)"
