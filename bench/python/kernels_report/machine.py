"""The machine a run was made on: CPU, SIMD flags, memory, kernel, huge pages, load average."""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import subprocess
from pathlib import Path


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def collect_machine() -> dict:
    cpuinfo = _read("/proc/cpuinfo")
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    flags = re.search(r"^flags\s*:\s*(.+)$", cpuinfo, re.M)
    simd = []
    if flags:
        have = set(flags.group(1).split())
        simd = [f for f in ("sse4_2", "avx", "f16c", "fma", "avx2", "avx512f", "avx512bw", "avx512vl",
                            "avx512_fp16", "avx512_bf16") if f in have]
    mem = re.search(r"^MemTotal:\s*(\d+) kB", _read("/proc/meminfo"), re.M)
    lscpu = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                lscpu[k.strip()] = v.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    thp = _read("/sys/kernel/mm/transparent_hugepage/enabled").strip()
    return {
        "cpu_model": model.group(1).strip() if model else platform.processor(),
        "cpu_family": lscpu.get("CPU family", ""),
        "cpu_model_number": lscpu.get("Model", ""),
        "hypervisor": lscpu.get("Hypervisor vendor", ""),
        "logical_cpus": os.cpu_count(),
        "l2": lscpu.get("L2 cache", ""),
        "l3": lscpu.get("L3 cache", ""),
        "simd_flags": simd,
        "mem_total_gib": round(int(mem.group(1)) / 1024 / 1024, 1) if mem else None,
        "kernel": platform.release(),
        "transparent_hugepages": thp,
        "loadavg": _read("/proc/loadavg").split()[:3],
        "collected_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
