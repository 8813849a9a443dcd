"""The examples as their users run them: the JVM project resolves safetensors-core, -loader and
-sampler by coordinates from the deployed repository; the PySpark job gets the connector with
spark.jars.packages; the command line's runnable jar is fetched by coordinates and run. None sees
the source tree."""

import json
import os
import struct
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SETTINGS = Path(__file__).resolve().parent / "settings.xml"
CONSUMER_M2 = ROOT / "build" / "consumer-m2"
DEPLOYED = os.environ["ST_DEPLOYED_REPO"]


def run(cmd, cwd, env=None, timeout=900):
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


def fresh_consumer_repo():
    """The consumer's own local repository, without any earlier copy of our artifacts (third-party
    ones stay, as in a user's ~/.m2)."""
    shutil.rmtree(CONSUMER_M2 / "io" / "github" / "semyonsinchenko", ignore_errors=True)
    return CONSUMER_M2


def test_the_jvm_example_builds_by_coordinates_and_runs(tmp_path):
    project = tmp_path / "jvm"
    shutil.copytree(EXAMPLES / "jvm", project)
    m2 = fresh_consumer_repo()
    mvn = ["mvn", "-B", "-ntp", "-q", "-s", SETTINGS, f"-Dmaven.repo.local={m2}"]
    run([*mvn, "package", "dependency:build-classpath", "-Dmdep.outputFile=cp.txt"], project)
    resolved = sorted(p.name for p in (m2 / "io" / "github" / "semyonsinchenko").iterdir())
    assert {"safetensors-core", "safetensors-loader", "safetensors-sampler"} <= set(resolved), resolved
    classpath = (project / "cp.txt").read_text().strip()
    assert str(ROOT / "java") not in classpath, "the example must not see the source tree"
    assert all(str(m2) in entry for entry in classpath.split(os.pathsep) if "semyonsinchenko" in entry)
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
    out = run([java, "--enable-native-access=ALL-UNNAMED", "-cp", f"{project / 'target' / 'classes'}{os.pathsep}{classpath}",
               "example.Quickstart", tmp_path / "work"], project).stdout.splitlines()
    assert out[0] == "read: embeddings.weight F32 [2, 3], last 6.0", out
    assert out[1].startswith("convert: BF16 -> F32 1.0 -2.0 ("), out
    assert out[2].startswith("load: 2 tensors in "), out
    assert out[3].startswith("sample: "), out


def test_the_pyspark_example_gets_the_connector_by_coordinates(tmp_path):
    ivy = tmp_path / "ivy"
    env = dict(os.environ, PYSPARK_SUBMIT_ARGS=f"--repositories {DEPLOYED} --conf spark.jars.ivy={ivy} pyspark-shell")
    out = run([sys.executable, EXAMPLES / "pyspark" / "example.py", tmp_path / "out"], tmp_path, env).stdout
    assert "read: 100 rows; row42 = [42.0, 0.5, -1.0]" in out, out
    fetched = [p.name for p in ivy.rglob("*.jar")]
    assert any(n.startswith("io.github.semyonsinchenko_safetensors-spark_2.13") for n in fetched), fetched


def deployed_version(artifact: str) -> str:
    versions = [p.name for p in (Path(DEPLOYED.removeprefix("file://")) / "io" / "github" / "semyonsinchenko"
                                 / artifact).iterdir() if p.is_dir()]
    assert len(versions) == 1, versions
    return versions[0]


def test_the_cli_runs_from_its_published_jar(tmp_path):
    """The command line without a checkout, as the README installs it: the runnable jar (classifier
    all) copied by coordinates, then run with a JDK 25's java."""
    version = deployed_version("safetensors-cli")
    m2 = fresh_consumer_repo()
    mvn = ["mvn", "-B", "-ntp", "-q", "-s", SETTINGS, f"-Dmaven.repo.local={m2}"]
    run([*mvn, "dependency:copy", f"-Dartifact=io.github.semyonsinchenko:safetensors-cli:{version}:jar:all",
         f"-DoutputDirectory={tmp_path}", "-Dmdep.stripVersion=true"], tmp_path)
    jar = tmp_path / "safetensors-cli-all.jar"
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
    out = run([java, "-jar", jar, "--version"], tmp_path).stdout.splitlines()
    assert out[0] == f"safetensors-cli {version}", out
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    header += b" " * (-len(header) % 8)
    model = tmp_path / "model.safetensors"
    model.write_bytes(struct.pack("<Q", len(header)) + header + struct.pack("<2f", 1.0, 2.0))
    listing = run([java, "-jar", jar, "inspect", model], tmp_path).stdout
    assert any(line.split()[:4] == ["0", "w", "F32", "[2]"] for line in listing.splitlines()), listing
