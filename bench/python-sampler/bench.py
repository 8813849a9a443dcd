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

try:  # headwater's own Python module (a maturin build of mrdmnd/tributary), when installed
    import headwater
except ImportError:
    headwater = None

HERE = Path(__file__).resolve().parent
SEQ = 1024
# The binding's samples/s must be at least this share of the Java API's (same run, same database).
TARGET = 0.95
# (batch size, warm-up batches, timed batches)
CASES = [(32, 20, 200), (128, 5, 50)]


def compile_java(work: Path) -> Path:
    classes = work / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(hw.find_java_home() / "bin" / "javac"), "-cp", os.environ["SAFETENSORS_SAMPLER_JAR"], "-d",
                    str(classes), str(HERE / "JavaPull.java")], check=True)
    return classes


def run_java(db: Path, b: int, warmup: int, n: int) -> tuple[float, float]:
    """The Java loop, in the same embedded JVM (one call; the GIL is released meanwhile).
    Returns (batches per wall second, batches per CPU second of the whole process)."""
    import jpype

    paths = jpype.JClass("java.nio.file.Paths")
    pull = jpype.JClass("JavaPull").pull
    pull(paths.get(str(db)), b, SEQ, warmup, 1)  # not timed: open + warm-up, like the Python side
    c0 = time.process_time()
    bps = float(pull(paths.get(str(db)), b, SEQ, 0, n))
    cpu = time.process_time() - c0
    return bps, n / cpu


def pull_loop(sampler, b: int, n: int) -> tuple[float, float]:
    """Pulls n training batches, touching one value so each dict is really built, dropping each batch.
    Returns (batches per wall second, batches per CPU second of the whole process)."""
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        batch = sampler.next_train_batch()
        assert batch["numeric_values"].shape == (b, SEQ)
        del batch
    return n / (time.perf_counter() - t0), n / (time.process_time() - c0)


def run_python(db: Path, b: int, warmup: int, n: int) -> tuple[float, float]:
    """Our binding: pull + numpy dict over the JVM batch."""
    with hw.Sampler(db, default_batch_size=b, default_sequence_length=SEQ) as sampler:
        for _ in range(warmup):
            sampler.next_train_batch()
    with hw.Sampler(db, default_batch_size=b, default_sequence_length=SEQ) as sampler:
        return pull_loop(sampler, b, n)


def run_headwater(db: Path, b: int, warmup: int, n: int) -> tuple[float, float]:
    """headwater's own module, the same loop and configuration."""
    sampler = headwater.Sampler(str(db), default_batch_size=b, default_sequence_length=SEQ)
    try:
        for _ in range(warmup):
            sampler.next_train_batch()
    finally:
        sampler.shutdown()
    sampler = headwater.Sampler(str(db), default_batch_size=b, default_sequence_length=SEQ)
    try:
        return pull_loop(sampler, b, n)
    finally:
        sampler.shutdown()


RUNNERS = {"java": run_java, "python": run_python, "headwater": run_headwater}


def wrap_cost_us(db: Path, b: int, rounds: int = 1000) -> float:
    """Python-side cost of one batch once it is ready: the numpy dict over a Java batch (no waiting)."""
    with hw.Sampler(db, default_batch_size=b, default_sequence_length=SEQ) as sampler:
        jbatch = sampler.java_sampler.nextTrain()
        keep = [sampler._wrap(jbatch) for _ in range(3000)]  # warm: layout cached, Java side compiled
        t0 = time.process_time()
        for _ in range(rounds):
            keep.append(sampler._wrap(jbatch))
        cost = (time.process_time() - t0) / rounds * 1e6
        del keep
        return cost


def busy(load: str) -> bool:
    """More runnable work than CPUs at the start: other jobs compete with the benchmark."""
    try:
        return float(load.split()[0]) > (os.cpu_count() or 1)
    except (ValueError, IndexError):
        return True


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
    ap.add_argument("--db", type=Path, help="an existing database instead of a generated one of --rows rows")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    hw.start_jvm(jvm_args=["-Xmx4g"], extra_classpath=[compile_java(args.work)])
    if args.db:
        db = args.db
        with open(db / "graph.bin", "rb") as f:
            n, e = int.from_bytes(f.read(4), "little"), int.from_bytes(f.read(4), "little")
        args.db_text = f"the database given with --db ({n:,} rows, {e:,} FK edges)"
    else:
        db = args.work / f"db-{args.rows}"
        if not db.exists():
            args.work.mkdir(parents=True, exist_ok=True)
            hw.generate_synthetic_database(db, rows=args.rows, seed=1)
        args.db_text = f"a synthetic database (the Java generator, {args.rows:,} rows, seed 1)"
    # Warm the JIT on both paths before anything is timed (the first sampler of a JVM runs cold code).
    run_java(db, 32, 20, 1)
    run_python(db, 32, 20, 1)
    started, load_start = dt.datetime.now(dt.timezone.utc), loadavg()
    paths = ["java", "python"] + (["headwater"] if headwater else [])
    results = {}  # b -> {path: [...]} of batches per wall second
    cpu = {}  # the same per CPU second
    for b, warmup, n in CASES:
        runs = results.setdefault(b, {path: [] for path in paths})
        cpu_runs = cpu.setdefault(b, {path: [] for path in paths})
        for r in range(args.repeats):
            # Rotate which path goes first, so a load change does not favour one of them.
            order = paths[r % len(paths):] + paths[:r % len(paths)]
            for path in order:
                bps, bpc = RUNNERS[path](db, b, warmup, n)
                runs[path].append(bps)
                cpu_runs[path].append(bpc)
                print(f"B={b} {path:6s} run {r}: {bps:.2f} batches/s, {bpc:.2f} per CPU-s (load {loadavg()})",
                      flush=True)
    wrap = {b: wrap_cost_us(db, b) for b, _, _ in CASES}
    ended, load_end = dt.datetime.now(dt.timezone.utc), loadavg()
    write_report(args, results, cpu, wrap, started, ended, load_start, load_end)


def ratio_rows(data):
    """Table rows (without the closing columns) of Java and Python medians and runs, and their ratios."""
    for b, runs in data.items():
        j, p = np.median(runs["java"]), np.median(runs["python"])
        fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
        yield f"| {b} | {j:.2f} ({fmt(runs['java'])}) | {p:.2f} ({fmt(runs['python'])}) | {p / j:.2f}×", p / j


def write_report(args, results, cpu, wrap, started, ended, load_start, load_end):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    jvm = hw.find_java_home()
    release = (jvm / "release").read_text()
    jver = re.search(r'JAVA_RUNTIME_VERSION="([^"]+)"', release)
    lines = [
        "# Python sampler: batches/s through the binding vs the Java API",
        "",
        "Regenerate with `bench/python-sampler/run.sh [repeats] [rows] [database]`. Plot: "
        "[python-sampler.png](python-sampler.png).",
        "",
        f"Every run uses {args.db_text} and the default configuration except B, with S = {SEQ}, all in one process "
        "and one JVM (embedded by JPype). Before anything is timed, one sampler per path warms the JIT. A run "
        "opens a sampler and pulls warm-up batches, then opens a fresh one and times a fixed number of "
        f"training batches ({', '.join(f'B={b}: {n}' for b, _, n in CASES)}) from its creation. "
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
        f"- Load average (1/5/15 min) at start: {load_start}; at end: {load_end} ({os.cpu_count()} CPUs). "
        + ("The machine was busy with other jobs: absolute numbers are low and noisy; the ratio is what this measures."
           if busy(load_start) else "No other job was running."),
        f"- Run: {started:%Y-%m-%d %H:%M} to {ended:%H:%M} UTC, {args.repeats} repeats per path and size",
        "",
        "## Results",
        "",
        "| B | Java batches/s (median; runs) | Python batches/s (median; runs) | Python / Java | target | verdict |",
        "|---:|---|---|---:|---:|---|",
    ]
    lines += [f"{row} | {TARGET}× | {'MET' if ratio >= TARGET else 'NOT MET'} |" for row, ratio in ratio_rows(results)]
    lines += [
        "",
        "The same runs per CPU-second of the process (all threads: producers, JVM, Python), which a shared "
        "machine disturbs less than wall time:",
        "",
        "| B | Java batches per CPU-s (median; runs) | Python batches per CPU-s (median; runs) | Python / Java |",
        "|---:|---|---|---:|",
    ]
    lines += [f"{row} |" for row, _ in ratio_rows(cpu)]
    lines += [
        "",
        "Python-side cost of a batch that is already built (the numpy dict over the Java batch, no waiting), "
        "averaged over 1,000 conversions of one batch after 3,000 untimed ones:",
        "",
        "| B | CPU µs per batch |",
        "|---:|---:|",
    ]
    for b, us in wrap.items():
        lines.append(f"| {b} | {us:.1f} |")
    lines += ["", "Reading: the binding's own work per batch is small next to building the batch; what it adds, as a "
              "share of the CPU time one Java batch takes (from the per-CPU-second medians):", ""]
    for b, us in wrap.items():
        java_us = 1e6 / np.median(cpu[b]["java"])
        lines.append(f"- B={b}: {us:.0f} µs of {java_us:,.0f} µs ({us / java_us:.1%}); wall-time runs spread "
                     f"{min(results[b]['java'] + results[b]['python']):.1f}–"
                     f"{max(results[b]['java'] + results[b]['python']):.1f} batches/s on this machine.")
    if headwater is None:
        lines += ["", "headwater's own Python module was not installed here, so there is no headwater column.", ""]
    else:
        lines += [
            "",
            "## Against headwater's own Python module",
            "",
            "The same loop over `headwater.Sampler` (its Rust sampler through PyO3, built with maturin outside the "
            "repository), in the same process and run, rotated with the two paths above:",
            "",
            "| B | headwater batches/s (median; runs) | ours (Python) / headwater | headwater per CPU-s (median) "
            "| ours / headwater per CPU-s |",
            "|---:|---|---:|---:|---:|",
        ]
        for b in results:
            hw_runs, ours = results[b]["headwater"], np.median(results[b]["python"])
            hw_cpu, ours_cpu = np.median(cpu[b]["headwater"]), np.median(cpu[b]["python"])
            lines.append(f"| {b} | {np.median(hw_runs):.2f} ({', '.join(f'{x:.2f}' for x in hw_runs)}) "
                         f"| {ours / np.median(hw_runs):.2f}× | {hw_cpu:.2f} | {ours_cpu / hw_cpu:.2f}× |")
        lines.append("")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text("\n".join(lines), encoding="utf-8")

    fig, ax = plt.subplots(figsize=(6, 3.5))
    xs = np.arange(len(results))
    drawn = [p for p in ("java", "python", "headwater") if p in next(iter(results.values()))]
    width = 0.8 / len(drawn)
    labels = {"java": "Java API", "python": "Python (numpy)", "headwater": "headwater (PyO3)"}
    colours = {"java": "#1f77b4", "python": "#ff7f0e", "headwater": "#2ca02c"}
    for k, path in enumerate(drawn):
        offset = (k - (len(drawn) - 1) / 2) * width
        med = [np.median(r[path]) for r in results.values()]
        ax.bar(xs + offset, med, width, label=labels[path], color=colours[path])
        for x, r in zip(xs, results.values()):
            ax.scatter([x + offset] * len(r[path]), r[path], color="black", s=8, zorder=3)
    ax.set_xticks(xs, [f"B={b}, S={SEQ}" for b in results])
    ax.set_ylabel("batches / s")
    ax.set_title(f"Sampler throughput through Python (load {load_start} → {load_end})", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out.with_suffix(".png"), dpi=120)
    print(args.out.with_suffix(".md").read_text())


if __name__ == "__main__":
    sys.exit(main())
