"""The GitHub Actions workflow is valid and runs the same scripts and runtimes as a developer."""

import re
import subprocess
import sys
from pathlib import Path

import check_jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"


def load():
    # PyYAML reads the key `on` as the boolean True (YAML 1.1); GitHub reads it as "on".
    with WORKFLOW.open() as f:
        return yaml.load(f, Loader=yaml.BaseLoader)


def test_the_github_workflow_schema_ships_with_check_jsonschema():
    vendored = Path(check_jsonschema.__file__).parent / "builtin_schemas" / "vendor" / "github-workflows.json"
    assert vendored.is_file(), "the offline check needs the vendored schema"


def test_workflow_is_valid_against_the_github_workflow_schema():
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_rejects_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("name: broken\non: push\njobs:\n  test:\n    steps:\n      - run: true\n")  # no runs-on
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(broken)],
        capture_output=True, text=True,
    )
    assert result.returncode != 0


def runs(job):
    return [step["run"] for step in job["steps"] if "run" in step]


def test_ci_runs_the_readme_test_command():
    wf = load()
    assert "./scripts/test.sh" in runs(wf["jobs"]["test"])
    readme = (ROOT / "README.md").read_text()
    assert "./scripts/test.sh" in readme


def test_ci_runs_the_runtime_matrix_script_for_every_supported_runtime():
    job = load()["jobs"]["spark-runtimes"]
    matrix = job["strategy"]["matrix"]
    assert matrix["java"] == ["25"]
    script = (ROOT / "tests" / "pyspark_interop" / "matrix.sh").read_text()
    supported = re.search(r"^SUPPORTED_PYSPARK=\(([^)]*)\)", script, re.M).group(1).split()
    assert matrix["pyspark"] == supported
    assert any(r.startswith("tests/pyspark_interop/matrix.sh") and "matrix.pyspark" in r for r in runs(job))


def test_every_script_the_workflow_runs_exists_and_is_executable():
    wf = load()
    for job in wf["jobs"].values():
        for command in runs(job):
            for path in re.findall(r"(?:\./)?((?:scripts|tests)/[\w/.-]+\.sh)", command):
                f = ROOT / path
                assert f.is_file() and f.stat().st_mode & 0o111, path
