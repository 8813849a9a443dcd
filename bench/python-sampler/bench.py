"""Batches/s through the Python binding vs the Java API, same run (see run.sh)."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import safetensors_jvm_sampler as hw

HERE = Path(__file__).resolve().parent
SEQ = 1024
# (batch size, warm-up batches, timed batches)
CASES = [(32, 10, 60), (128, 4, 20)]


def compile_java(work: Path) -> Path:
    classes = work / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(hw.find_java_home() / "bin" / "javac"), "-cp", os.environ["SAFETENSORS_SAMPLER_JAR"], "-d",
                    str(classes), str(HERE / "JavaPull.java")], check=True)
    return classes


def run_java(db: Path, b: int, warmup: int, n: int) -> float:
    """The Java loop, in the same embedded JVM (one call; the GIL is released meanwhile)."""
    import jpype

    paths = jpype.JClass("java.nio.file.Paths")
    return float(jpype.JClass("JavaPull").pull(paths.get(str(db)), b, SEQ, warmup, n))


def run_python(db: Path, b: int, warmup: int, n: int) -> float:
    """Pull + numpy dict, touching one value so the dict is really built; the batch is dropped each step."""
    with hw.Sampler(db, default_batch_size=b, default_sequence_length=SEQ) as sampler:
        for _ in range(warmup):
            sampler.next_train_batch()
        t0 = time.perf_counter()
        for _ in range(n):
            batch = sampler.next_train_batch()
            assert batch["numeric_values"].shape == (b, SEQ)
            del batch
        return n / (time.perf_counter() - t0)


def wrap_cost_us(db: Path, b: int, rounds: int = 300) -> float:
    """Python-side cost of one batch once it is ready: the numpy dict over a Java batch (no waiting)."""
    with hw.Sampler(db, default_batch_size=b, default_sequence_length=SEQ) as sampler:
        jbatch = sampler.java_sampler.nextTrain()
        keep = [sampler._wrap(jbatch)]  # layout cached, as after the first batch
        t0 = time.perf_counter()
        for _ in range(rounds):
            keep.append(sampler._wrap(jbatch))
        cost = (time.perf_counter() - t0) / rounds * 1e6
        del keep
        return cost


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    hw.start_jvm(jvm_args=["-Xmx2g"], extra_classpath=[compile_java(args.work)])
    db = args.work / f"db-{args.rows}"
    if not db.exists():
        args.work.mkdir(parents=True, exist_ok=True)
        hw.generate_synthetic_database(db, rows=args.rows, seed=1)
    # Warm the JIT on both paths before anything is timed (the first sampler of a JVM runs cold code).
    run_java(db, 32, 20, 1)
    run_python(db, 32, 20, 1)
    started, load_start = dt.datetime.now(dt.timezone.utc), loadavg()
    results = {}  # b -> {"java": [...], "python": [...]}
    for b, warmup, n in CASES:
        runs = results.setdefault(b, {"java": [], "python": []})
        for r in range(args.repeats):
            # Alternate which path goes first, so a load change does not favour one of them.
            order = ("java", "python") if r % 2 == 0 else ("python", "java")
            for path in order:
                bps = run_java(db, b, warmup, n) if path == "java" else run_python(db, b, warmup, n)
                runs[path].append(bps)
                print(f"B={b} {path:6s} run {r}: {bps:.2f} batches/s (load {loadavg()})", flush=True)
    wrap = {b: wrap_cost_us(db, b) for b, _, _ in CASES}
    ended, load_end = dt.datetime.now(dt.timezone.utc), loadavg()
    write_report(args, results, wrap, started, ended, load_start, load_end)


def write_report(args, results, wrap, started, ended, load_start, load_end):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    jvm = hw.find_java_home()
    release = (jvm / "release").read_text()
    jver = re.search(r'JAVA_RUNTIME_VERSION="([^"]+)"', release)
    lines = [
        "# Python sampler: batches/s through the binding vs the Java API",
        "",
        "Regenerate with `bench/python-sampler/run.sh [repeats] [rows]`. Plot: [python-sampler.png](python-sampler.png).",
        "",
        "Each run opens a sampler on the same synthetic database (the Java generator, "
        f"{args.rows:,} rows, seed 1), default configuration except B, S = {SEQ}; it pulls warm-up batches, then "
        "times a fixed number of training batches, all in one process and one JVM (embedded by JPype). "
        "**Java**: a Java loop of `Sampler.nextTrain()` + `close()` (`JavaPull.java`, one call from Python). "
        "**Python**: `next_train_batch()` (the dict of zero-copy numpy arrays), dropped each step so the "
        "memory returns to the pool. Runs alternate which path goes first to spread load changes over both.",
        "",
        "## Machine",
        "",
        f"- {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, "
        f"{platform.system()} {platform.release()}",
        f"- JDK {jver.group(1) if jver else '?'}; Python {platform.python_version()}, numpy {np.__version__}, "
        f"JPype {__import__('jpype').__version__}",
        f"- **Shared machine**: other jobs were running. Load average (1/5/15 min) at start: {load_start}; "
        f"at end: {load_end} (2 CPUs). Absolute numbers are low and noisy; the ratio is what this measures.",
        f"- Run: {started:%Y-%m-%d %H:%M} to {ended:%H:%M} UTC, {args.repeats} repeats per path and size",
        "",
        "## Results",
        "",
        "| B | Java batches/s (median, runs) | Python batches/s (median, runs) | Python / Java | target | verdict |",
        "|---:|---|---|---:|---:|---|",
    ]
    for b, runs in results.items():
        j, p = np.median(runs["java"]), np.median(runs["python"])
        ratio = p / j
        lines.append(f"| {b} | {j:.2f} ({', '.join(f'{x:.2f}' for x in runs['java'])}) | {p:.2f} "
                     f"({', '.join(f'{x:.2f}' for x in runs['python'])}) | {ratio:.2f}× | 0.9× | "
                     f"{'MET' if ratio >= 0.9 else 'NOT MET'} |")
    lines += [
        "",
        "Python-side cost of a batch that is already built (the numpy dict over the Java batch, no waiting), "
        "averaged over 300 conversions of one batch:",
        "",
        "| B | µs per batch |",
        "|---:|---:|",
    ]
    for b, us in wrap.items():
        lines.append(f"| {b} | {us:.1f} |")
    lines += [
        "",
        "headwater's own Python module was not installed here, so there is no headwater column.",
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text("\n".join(lines), encoding="utf-8")

    fig, ax = plt.subplots(figsize=(6, 3.5))
    xs = np.arange(len(results))
    for k, (path, colour) in enumerate((("java", "#1f77b4"), ("python", "#ff7f0e"))):
        med = [np.median(r[path]) for r in results.values()]
        ax.bar(xs + (k - 0.5) * 0.38, med, 0.38, label={"java": "Java API", "python": "Python (numpy)"}[path],
               color=colour)
        for x, r in zip(xs, results.values()):
            ax.scatter([x + (k - 0.5) * 0.38] * len(r[path]), r[path], color="black", s=8, zorder=3)
    ax.set_xticks(xs, [f"B={b}, S={SEQ}" for b in results])
    ax.set_ylabel("batches / s")
    ax.set_title(f"Sampler throughput, Python vs Java (load {load_start} → {load_end})", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out.with_suffix(".png"), dpi=120)
    print(args.out.with_suffix(".md").read_text())


if __name__ == "__main__":
    sys.exit(main())
