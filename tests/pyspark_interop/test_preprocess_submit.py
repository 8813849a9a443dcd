"""The preprocessor's spark-submit main class under a real Spark distribution (the PySpark 4.2.0 wheel's
bin/spark-submit): it builds headwater's tiny fixture, the output equals headwater's own output, and
the sampler (through the CLI) opens it and assigns every seed headwater's split."""

import glob
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

FIXTURE = ROOT / "java" / "sampler" / "src" / "test" / "resources" / "headwater-tiny"
DATASET = "synth-tiny"
MAIN_CLASS = "io.github.semyonsinchenko.safetensors.preprocess.PreprocessMain"


def preprocessor_jar() -> Path:
    jars = sorted(glob.glob(str(ROOT / "spark" / "preprocess" / "target" / "safetensors-preprocess_2.13-*-all.jar")))
    if not jars:
        pytest.fail("spark/preprocess/target/safetensors-preprocess_2.13-<version>-all.jar is missing: build it first"
                    " with 'mvn -B -ntp -DskipTests package' (scripts/test.sh does).")
    return Path(jars[-1])


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@pytest.fixture(scope="module")
def processed(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("preprocess")
    shutil.copytree(FIXTURE / "input", data_dir, dirs_exist_ok=True)
    home = spark_home()
    cmd = [str(home / "bin" / "spark-submit"), "--master", "local[2]", "--class", MAIN_CLASS,
           "--conf", "spark.ui.enabled=false",
           "--conf", "spark.driver.extraJavaOptions=--enable-native-access=ALL-UNNAMED",
           str(preprocessor_jar()), "--data-dir", str(data_dir), "--dataset", DATASET, "--skip-embeddings"]
    env = dict(os.environ, SPARK_HOME=str(home))
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"spark-submit failed ({run.returncode}):\n{run.stderr[-4000:]}"
    assert "stage 8/8: metadata.json" in run.stderr
    return data_dir / "processed" / DATASET


def files(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_output_equals_headwaters(processed):
    expected = FIXTURE / "expected" / "db"
    assert files(processed) == files(expected)
    for name in files(expected):
        want = (expected / name).read_bytes()
        got = (processed / name).read_bytes()
        if name.endswith("embeddings.bin"):  # --skip-embeddings: zero vectors of headwater's shape
            assert len(got) == len(want), name
            assert got.count(0) == len(got), f"{name} is all zeros"
        elif name == "graph.bin":
            assert_same_graph(want, got)
        else:
            assert got == want, name


def assert_same_graph(want: bytes, got: bytes):
    """Exact but for headwater's Q9: outgoing neighbours within a row compare as multisets."""
    assert len(got) == len(want)
    w = struct.unpack(f"<{len(want) // 4}I", want)
    g = struct.unpack(f"<{len(got) // 4}I", got)
    n, e = w[0], w[1]
    assert g[:4 + n + 1] == w[:4 + n + 1], "header and outgoing row pointers"
    col = 4 + n + 1
    for r in range(n):
        lo, hi = col + w[4 + r], col + w[4 + r + 1]
        assert sorted(g[lo:hi]) == sorted(w[lo:hi]), f"outgoing neighbours of row {r}"
    assert g[col + e:] == w[col + e:], "incoming row pointers and neighbours"


def test_sampler_opens_it_with_headwaters_splits(processed):
    cli_jar = ROOT / "java" / "cli" / "target" / "safetensors-cli.jar"
    if not cli_jar.is_file():
        pytest.fail(f"{cli_jar} is missing: build it first with 'mvn -B -ntp -DskipTests package'.")
    run = subprocess.run([str(ROOT / "bin" / "safetensors"), "sampler", "splits", str(processed)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    # headwater's splits.tsv: task_idx, task_name, seed_idx, anchor_row, observation_time_us, siphash13, bucket, split
    expected = [line.split("\t") for line in (FIXTURE / "expected" / "splits.tsv").read_text().splitlines()[1:]]
    got = [line.split("\t") for line in run.stdout.splitlines()]
    assert got[0] == ["task", "seed_idx", "anchor_row", "split"]
    assert got[1:] == [[f[1], f[2], f[3], f[7]] for f in expected]
    assert len(expected) == 350 + 157 + 950  # every seed of the three tasks
