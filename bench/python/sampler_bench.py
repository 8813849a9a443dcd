"""Sampler throughput against headwater, side by side (run by bench/sampler.sh; see bench/README.md).

Each measurement is a process of its own (ours: SamplerBench; headwater: the command in
HEADWATER_BENCH_CMD), so its open time and peak RSS are its own. Rounds alternate which sampler
goes first; before each run the 1-minute load average is read (after waiting for it to fall below
--max-load, up to --wait-idle seconds) and recorded. A report whose runs started above --max-load is
refused unless --allow-busy is given: wall-clock rates on a busy machine are not headline numbers.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

CONFIGS = [(32, 1), (32, 2), (128, 1), (128, 2)]
SEQ = 1024
TARGET = 1.5


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def wait_idle(max_load: float, wait: float) -> float:
    """Waits (up to `wait` seconds) for the 1-minute load average to fall to max_load; returns it."""
    deadline = time.monotonic() + wait
    load = loadavg()
    while load > max_load and time.monotonic() < deadline:
        time.sleep(5)
        load = loadavg()
    return load


def parse(out: str) -> dict:
    r = {}
    for line in out.splitlines():
        if "=" in line and " " not in line.strip():
            k, v = line.strip().split("=", 1)
            try:
                r[k] = float(v)
            except ValueError:
                pass
    return r


def run(cmd: list[str], args: list[str], env_threads: int | None = None) -> dict:
    env = dict(os.environ)
    if env_threads is not None:
        env["RAYON_NUM_THREADS"] = str(env_threads)
    t0 = time.monotonic()
    p = subprocess.run(cmd + args, capture_output=True, text=True, env=env)
    r = parse(p.stdout)
    r["exit"] = p.returncode
    r["process_seconds"] = round(time.monotonic() - t0, 3)
    if p.returncode != 0 or "samples_per_s" not in r:
        r["error"] = (p.stdout + p.stderr)[-2000:]
        print(r["error"], file=sys.stderr)
    return r


def database_summary(db: Path) -> dict:
    meta = json.loads((db / "metadata.json").read_text())
    with open(db / "graph.bin", "rb") as f:
        head = f.read(8)
    return {
        "rows": int.from_bytes(head[0:4], "little"),
        "edges": int.from_bytes(head[4:8], "little"),
        "tables": len(meta["table_metadata"]),
        "tasks": len(meta["task_metadata"]),
    }


def measure(db: Path, configs, rounds, ours, headwater, a) -> list[dict]:
    records = []
    for r in range(rounds):
        for batch, threads in configs:
            sides = ["ours", "headwater"] if headwater else ["ours"]
            if r % 2 == 1:
                sides.reverse()
            for side in sides:
                load = wait_idle(a.max_load, a.wait_idle)
                started = dt.datetime.now(dt.timezone.utc).strftime("%H:%M:%S")
                argv = [str(db), str(batch), str(SEQ), str(threads), str(max(1, a.min_batches * 32 // batch)),
                        str(max(1, a.warmup * 32 // batch)), str(a.min_seconds)]
                rec = run(ours if side == "ours" else headwater, argv, threads if side == "headwater" else None)
                rec.update(impl=side, batch=batch, threads=threads, round=r + 1, load_before=load,
                           started_utc=started)
                print(f"round {r + 1} {side:9s} B={batch:3d} threads={threads}: "
                      f"{rec.get('samples_per_s', float('nan')):7.1f} samples/s, "
                      f"{rec.get('samples_per_cpu_s', float('nan')):7.1f} per CPU-s, "
                      f"peak RSS {rec.get('peak_rss_kb', 0) / 1024:6.0f} MiB, load before {load:.2f}", flush=True)
                records.append(rec)
    return records


def digests(cmd: list[str], db: Path, count: int = 3) -> str | None:
    p = subprocess.run(cmd + ["digest", str(db), "32", str(SEQ), str(count)], capture_output=True, text=True)
    return p.stdout if p.returncode == 0 and p.stdout.startswith("batch 0") else None


def med(records, impl, b, t, key):
    xs = [r[key] for r in records if r["impl"] == impl and r["batch"] == b and r["threads"] == t and key in r]
    return (statistics.median(xs) if xs else None), xs


def fmt_runs(xs, f="{:.0f}"):
    return ", ".join(f.format(x) for x in xs)


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--report-only":
        # The report and plot again from a raw file: --report-only RAW OUT_DIR.
        write_report(json.loads(Path(sys.argv[2]).read_text()), Path(sys.argv[3]))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True, help="command line of our measurement (SamplerBench)")
    ap.add_argument("--headwater", default=os.environ.get("HEADWATER_BENCH_CMD"))
    ap.add_argument("--headwater-build", default=os.environ.get("HEADWATER_BUILD", ""))
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--db-label", default="")
    ap.add_argument("--scale-db", type=Path)
    ap.add_argument("--scale-label", default="")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale-rounds", type=int, default=1)
    ap.add_argument("--min-seconds", type=float, default=10.0)
    ap.add_argument("--min-batches", type=int, default=64, help="timed batches at B=32 (scaled by 32/B)")
    ap.add_argument("--warmup", type=int, default=30, help="warm-up batches at B=32 (scaled by 32/B)")
    ap.add_argument("--max-load", type=float, default=(os.cpu_count() or 2) / 2)
    ap.add_argument("--wait-idle", type=float, default=600.0)
    ap.add_argument("--allow-busy", action="store_true")
    ap.add_argument("--jvm", default="")
    ap.add_argument("--raw", type=Path, required=True)
    ap.add_argument("--busy-raw", type=Path, help="where the raw data of a refused (busy) run goes")
    ap.add_argument("--out-dir", type=Path, required=True)
    a = ap.parse_args()
    ours = shlex.split(a.ours)
    headwater = shlex.split(a.headwater) if a.headwater else None
    started = dt.datetime.now(dt.timezone.utc)

    identical = None
    if headwater:
        mine, theirs = digests(ours, a.db), digests(headwater, a.db)
        identical = None if mine is None or theirs is None else mine == theirs
        print(f"first 3 train batches (B=32) identical to headwater's: {identical}", flush=True)
    records = measure(a.db, CONFIGS, a.rounds, ours, headwater, a)
    scale = measure(a.scale_db, CONFIGS, a.scale_rounds, ours, headwater, a) if a.scale_db else []
    raw = {
        "started_utc": started.isoformat(timespec="seconds"),
        "ended_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "cpu": cpu_model(),
        "jvm": a.jvm,
        "database": {**database_summary(a.db), "label": a.db_label},
        "scale_database": {**database_summary(a.scale_db), "label": a.scale_label} if a.scale_db else None,
        "headwater": Path(headwater[0]).name if headwater else None,
        "headwater_build": a.headwater_build,
        "identical_batches": identical,
        "max_load": a.max_load,
        "settings": {"rounds": a.rounds, "scale_rounds": a.scale_rounds, "min_seconds": a.min_seconds,
                     "warmup": a.warmup, "min_batches_at_32": a.min_batches},
        "results": records,
        "scale": scale,
    }
    a.raw.parent.mkdir(parents=True, exist_ok=True)
    busy = [r for r in records + scale if r["load_before"] > a.max_load]
    raw["busy_runs"] = len(busy)
    raw["allow_busy"] = a.allow_busy
    out_raw = a.raw if (not busy or a.allow_busy) else (a.busy_raw or a.raw.with_name(a.raw.stem + "-busy.json"))
    out_raw.parent.mkdir(parents=True, exist_ok=True)
    out_raw.write_text(json.dumps(raw, indent=1) + "\n")
    if busy and not a.allow_busy:
        print(f"error: {len(busy)} of {len(records) + len(scale)} runs started with a load average above "
              f"{a.max_load} (highest {max(r['load_before'] for r in busy):.2f}): not an idle machine, so no report "
              f"is written (raw data in {out_raw}). Rerun when the machine is idle, or pass --allow-busy for a "
              "provisional report.", file=sys.stderr)
        return 3
    write_report(raw, a.out_dir)
    return 0


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def write_report(raw: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    recs, hw = raw["results"], raw["headwater"] is not None
    db = raw["database"]
    loads = [r["load_before"] for r in recs + raw["scale"]]
    busy = raw["busy_runs"] > 0
    lines = [
        "# Sampler throughput: ours against headwater, side by side",
        "",
        f"Command: `bench/sampler.sh` (see `bench/README.md`); raw data: `results/raw/sampler.json`. Run "
        f"{raw['started_utc']} to {raw['ended_utc']} on {raw['cpus']} CPUs ({raw['cpu']}), JVM {raw['jvm']}.",
        "",
        f"Database: {db['rows']:,} rows, {db['edges']:,} FK edges, {db['tables']} tables, {db['tasks']} tasks"
        + (f" ({db['label']})" if db["label"] else "") + f". S = {SEQ}, headwater's defaults otherwise.",
        "",
    ]
    if busy:
        lines += [f"**Provisional: the machine was busy.** Load averages before the runs: {min(loads):.2f} to "
                  f"{max(loads):.2f} on {raw['cpus']} CPUs (an idle report needs every run to start at or below "
                  f"{raw['max_load']}). Other jobs shared the cores and caches: the wall-clock columns are low and "
                  "noisy, and the ratios are indicative only.", ""]
    else:
        lines += [f"Idle machine: every run started with a 1-minute load average at or below {raw['max_load']} "
                  f"({min(loads):.2f} to {max(loads):.2f}).", ""]
    if hw:
        ident = {True: "yes", False: "**NO**", None: "not checked (a side printed no digests)"}[raw["identical_batches"]]
        lines += [f"Same batches: the first three B = 32 training batches of both samplers on this database have "
                  f"identical tensors (FNV-1a-64 of each of the 16 tensors): {ident}.", ""]
    lines += [
        "| B | threads | headwater samples/s (median; runs) | ours samples/s (median; runs) | ours / headwater "
        "| samples per CPU-s, headwater / ours (ratio) | peak RSS MiB, headwater / ours | open s, headwater / ours "
        "| target 1.5x |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for b, t in CONFIGS:
        o, os_ = med(recs, "ours", b, t, "samples_per_s")
        oc, _ = med(recs, "ours", b, t, "samples_per_cpu_s")
        orss, _ = med(recs, "ours", b, t, "peak_rss_kb")
        oopen, _ = med(recs, "ours", b, t, "open_s")
        if hw:
            h, hs = med(recs, "headwater", b, t, "samples_per_s")
            hc, _ = med(recs, "headwater", b, t, "samples_per_cpu_s")
            hrss, _ = med(recs, "headwater", b, t, "peak_rss_kb")
            hopen, _ = med(recs, "headwater", b, t, "open_s")
            ratio = o / h if o and h else None
            met = ratio is not None and ratio >= TARGET
            verdicts.append(met)
            lines.append(
                f"| {b} | {t} | {h:.0f} ({fmt_runs(hs)}) | {o:.0f} ({fmt_runs(os_)}) | **{ratio:.2f}x** | "
                f"{hc:.0f} / {oc:.0f} ({oc / hc:.2f}x) | {hrss / 1024:.0f} / {orss / 1024:.0f} | "
                f"{hopen:.2f} / {oopen:.2f} | {'met' if met else 'not met'} |")
        else:
            lines.append(f"| {b} | {t} | not run | {o:.0f} ({fmt_runs(os_)}) | - | - / {oc:.0f} | - / "
                         f"{orss / 1024:.0f} | - / {oopen:.2f} | - |")
    lines += [""]
    if hw:
        lines += [("**Target met** in every configuration" if all(verdicts) else
                   f"Target met in {sum(verdicts)} of {len(verdicts)} configurations")
                  + (" (provisional: busy machine)." if busy else "."), ""]
    load_cells = "; ".join(f"r{r['round']} {r['impl']} B{r['batch']}/{r['threads']}t {r['load_before']:.2f}"
                           for r in recs)
    lines += [
        "- *samples/s*: training batches pulled through each sampler's public `Sampler` API after "
        f"{raw['settings']['warmup']} warm-up batches at B = 32 ({raw['settings']['warmup'] // 4} at B = 128), timed for at least {raw['settings']['min_seconds']:.0f} s "
        "(and at least a fixed number of batches), wall clock; medians of "
        f"{raw['settings']['rounds']} alternating rounds (the sampler that goes first alternates).",
        "- *samples per CPU-s*: the same samples divided by the process's user + system CPU time over the "
        "timed window (all threads: producers, workers, JIT, GC).",
        "- *peak RSS*: the process's VmHWM (mapped database pages it touched included). *open s*: from the "
        "call that opens the sampler to its return (ours includes every database check, the seed splits and "
        "the derived indexes).",
        "- Where our time goes, before and after the hot-path work: [sampler-profile.md](sampler-profile.md).",
        "- Both samplers run their train and val producers, as each `Sampler` always does; `threads` is our "
        "`SamplerConfig.threads` and headwater's rayon pool (`RAYON_NUM_THREADS`).",
        f"- Load average before each run: {load_cells}.",
        "- headwater: " + (f"`{raw['headwater']}` (`HEADWATER_BENCH_CMD`). " + (raw["headwater_build"] or
                           "Build not described (set HEADWATER_BUILD).") if hw else
                           "**not run** (`HEADWATER_BENCH_CMD` unset): no baseline in this run."),
        "",
    ]
    scale = raw["scale"]
    if scale:
        sdb = raw["scale_database"]
        lines += [
            "## Scale check",
            "",
            f"The same measurement on a larger database from the same generator: {sdb['rows']:,} rows, "
            f"{sdb['edges']:,} FK edges" + (f" ({sdb['label']})" if sdb["label"] else "") +
            f"; {raw['settings']['scale_rounds']} round(s).",
            "",
            "| B | threads | headwater samples/s | ours samples/s | ours / headwater | peak RSS MiB, headwater / ours "
            "| open s, headwater / ours | load before |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for b, t in CONFIGS:
            o, _ = med(scale, "ours", b, t, "samples_per_s")
            orss, _ = med(scale, "ours", b, t, "peak_rss_kb")
            oopen, _ = med(scale, "ours", b, t, "open_s")
            ld = "; ".join(f"{r['load_before']:.2f}" for r in scale if r["batch"] == b and r["threads"] == t)
            if hw:
                h, _ = med(scale, "headwater", b, t, "samples_per_s")
                hrss, _ = med(scale, "headwater", b, t, "peak_rss_kb")
                hopen, _ = med(scale, "headwater", b, t, "open_s")
                lines.append(f"| {b} | {t} | {h:.0f} | {o:.0f} | {o / h:.2f}x | {hrss / 1024:.0f} / {orss / 1024:.0f} "
                             f"| {hopen:.2f} / {oopen:.2f} | {ld} |")
            else:
                lines.append(f"| {b} | {t} | not run | {o:.0f} | - | - / {orss / 1024:.0f} | - / {oopen:.2f} | {ld} |")
        lines += [""]
    lines += ["![samples/s](sampler.png)", ""]
    out.mkdir(parents=True, exist_ok=True)
    (out / "sampler.md").write_text("\n".join(lines))

    panels = 3 if scale else 2
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 4))
    labels = [f"B={b}\n{t} thr" for b, t in CONFIGS]
    xs = range(len(CONFIGS))
    for ax, key, title, data in [(axes[0], "samples_per_s", "samples/s (wall clock)", recs),
                                 (axes[1], "samples_per_cpu_s", "samples per CPU-second", recs)] + \
            ([(axes[2], "samples_per_s", f"samples/s at {raw['scale_database']['rows']:,} rows", scale)]
             if scale else []):
        ov = [med(data, "ours", b, t, key)[0] or 0 for b, t in CONFIGS]
        ax.bar([x + 0.2 for x in xs], ov, width=0.4, label="ours")
        if hw:
            hv = [med(data, "headwater", b, t, key)[0] or 0 for b, t in CONFIGS]
            ax.bar([x - 0.2 for x in xs], hv, width=0.4, label="headwater", color="grey")
            for x, o, h in zip(xs, ov, hv):
                if h:
                    ax.annotate(f"{o / h:.2f}x", (x + 0.2, o), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(list(xs), labels)
        ax.set_title(title, fontsize=10)
        ax.set_ylim(0, 1.3 * max(ov + (hv if hw else [])) or 1)
        ax.legend(fontsize=8, loc="upper left", ncol=2)
    fig.suptitle(("provisional (busy machine): " if busy else "") + f"relational sampler, {db['rows']:,} rows, S = {SEQ}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "sampler.png", dpi=110)


if __name__ == "__main__":
    sys.exit(main())
