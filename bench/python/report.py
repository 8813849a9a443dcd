"""Turns one benchmark run into bench/results/kernels.md and kernels.png.

Inputs (all in the run's raw directory, written by bench/run-kernels.sh):
  jmh.json      JMH results (-rf json): ns/op per benchmark and parameters, plus -prof gc metrics.
  peer.json     numpy / ml_dtypes timings from kernels_peer.py.
  java.json     the Java side: JDK, default kernel path, native ISA level, Vector API width (BenchInfo).
  machine.json  CPU, cores, memory, kernel, load average (written by `report.py machine`).
  run.json      how the run was made: mode (full or quick), JMH arguments, start and end.

Conventions (repeated in the report):
  * size = SOURCE bytes of a conversion (4 KiB in cache, 64 MiB memory-bound); a kernel writes
    size / source_width * target_width bytes.
  * GB/s = bytes WRITTEN per second (10^9 bytes). For a copy, read = written.
  * "x copy" = time of MemorySegment.copy of as many bytes as the kernel WRITES (same run, same
    memory kind) / kernel time; > 1 means faster than that copy. "x copy(read)" uses the bytes
    the kernel READS instead.
  * "x astype" = numpy / ml_dtypes astype time (best of N) / kernel time (JMH mean): > 1 means
    faster than numpy. "x into" = the same against np.copyto into a preallocated array.
  * "x jdk" = time of the plain Float.float16ToFloat / floatToFloat16 loop / kernel time.

Usage:
  report.py machine --out RAW/machine.json
  report.py report --raw RAW --out-dir DIR
  report.py pool --out OUT.json RUN1.json RUN2.json ...
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kernels_report.data import Data
from kernels_report.machine import collect_machine
from kernels_report.markdown import write_markdown
from kernels_report.plot import write_plot
from kernels_report.pooling import pool_jmh, pool_peer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("machine", help="write the machine description JSON")
    m.add_argument("--out", required=True)
    r = sub.add_parser("report", help="write kernels.md and kernels.png from a run's raw directory")
    r.add_argument("--raw", required=True)
    r.add_argument("--out-dir", required=True)
    p = sub.add_parser("pool", help="pool single-fork JMH runs of the same benchmarks into one JMH JSON")
    p.add_argument("--out", required=True)
    p.add_argument("inputs", nargs="+")
    pp = sub.add_parser("pool-peer", help="pool kernels_peer.py runs of the same operations into one peer JSON")
    pp.add_argument("--out", required=True)
    pp.add_argument("inputs", nargs="+")
    args = ap.parse_args()
    if args.cmd == "machine":
        Path(args.out).write_text(json.dumps(collect_machine(), indent=1) + "\n")
        return
    if args.cmd == "pool":
        pool_jmh([Path(i) for i in args.inputs], Path(args.out))
        return
    if args.cmd == "pool-peer":
        pool_peer([Path(i) for i in args.inputs], Path(args.out))
        return
    d = Data(Path(args.raw))
    if not d.jmh:
        raise SystemExit(f"report: no JMH results in {args.raw}/jmh.json")
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_markdown(d, out / "kernels.md", "kernels.png")
    write_plot(d, out / "kernels.png")
    print(f"report: wrote {out / 'kernels.md'} and {out / 'kernels.png'}", file=sys.stderr)


if __name__ == "__main__":
    main()
