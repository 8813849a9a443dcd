"""The statistics of the report: JMH-style means and errors (Student's t) and the fault guard's paired cost."""

from __future__ import annotations

import math


def ratio(num: float | None, den: float | None) -> float | None:
    return num / den if num and den else None


def rel_err(r: dict | None) -> float | None:
    """JMH's error (half-width of its 99.9% interval) as a share of the mean."""
    if not r or not r.get("err_ns") or not r.get("ns"):
        return None
    return r["err_ns"] / r["ns"]


def mean_err(xs: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 99.9% interval (Student's t), as JMH reports a score."""
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return mean, float("nan")
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return mean, t_quantile(0.9995, n - 1) * sd / math.sqrt(n)


def guard_cost(forks: list[list[tuple[float, float]]]) -> dict:
    """The guard's cost from FaultGuardBench's forks of (on, off) ns per call, one pair per iteration,
    each summed over thousands of on, off, off, on groups of blocks tens of microseconds apart. The
    cost is the mean over all iterations of on / off - 1, with its 99.9% interval; each side's mean
    and error are over its per-iteration times, as a JMH score."""
    pairs = [p for fork in forks for p in fork]
    on_ns, on_err = mean_err([on for on, _ in pairs])
    off_ns, off_err = mean_err([off for _, off in pairs])
    cost, cost_err = mean_err([on / off - 1 for on, off in pairs])
    return {"on": on_ns, "on_err": on_err, "off": off_ns, "off_err": off_err, "cost": cost, "cost_err": cost_err,
            "iterations": len(pairs), "forks": len(forks)}


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (what JMH uses for its error), by bisection on the CDF integrated with
    Simpson's rule: no scipy in this project, and a few digits are all a report shows."""
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def cdf(x: float) -> float:
        steps = 2000
        h = x / steps
        f = [c * (1 + (i * h) ** 2 / df) ** (-(df + 1) / 2) for i in range(steps + 1)]
        return 0.5 + h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))

    lo, hi = 0.0, 1000.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2
