"""Helpers shared by the tests: run the safetensors-jvm CLI jar, and read a header as written."""

import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JAR = ROOT / "java" / "cli" / "target" / "safetensors-cli.jar"


def java_binary() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise RuntimeError("no java found: set JAVA_HOME to a JDK 25+ (scripts/env.sh does)")
    return found


def cli(*args, expect: int | None = 0) -> subprocess.CompletedProcess:
    """Runs `java -jar safetensors-cli.jar ARGS`; checks the exit code unless expect is None."""
    # C1 only: these JVMs live for a second and measure nothing, and it halves their start-up.
    cmd = [java_binary(), "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1", "-jar", str(JAR)]
    cmd += [str(a) for a in args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if expect is not None and proc.returncode != expect:
        raise AssertionError(
            f"safetensors-cli {' '.join(map(str, args))} exited {proc.returncode}, expected {expect}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc


def read_header(path) -> tuple[int, list]:
    """(N, the header's top-level entries as (key, value) pairs in file order)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        entries = json.loads(f.read(n), object_pairs_hook=lambda pairs: pairs)
    return n, entries


def header_metadata(path) -> list:
    """__metadata__ as (key, value) pairs in file order; [] when absent."""
    for key, value in read_header(path)[1]:
        if key == "__metadata__":
            return value
    return []


def header_tensors(path) -> list:
    """(name, dtype, shape, data_offsets) in file order."""
    out = []
    for key, value in read_header(path)[1]:
        if key != "__metadata__":
            d = dict(value)
            out.append((key, d["dtype"], d["shape"], d["data_offsets"]))
    return out
