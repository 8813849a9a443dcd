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


RELEASE = ROOT / ".github" / "workflows" / "release.yml"


def load_release():
    with RELEASE.open() as f:
        return yaml.load(f, Loader=yaml.BaseLoader)


def uses(job):
    return [step["uses"] for step in job["steps"] if "uses" in step]


def test_release_workflow_is_valid_against_the_github_workflow_schema():
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(RELEASE)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_release_runs_on_version_tags_only_after_every_test():
    wf = load_release()
    assert wf["on"] == {"push": {"tags": ["v*.*.*"]}}
    assert "./scripts/test.sh" in runs(wf["jobs"]["test"])
    assert any("release-version.sh check" in r for r in runs(wf["jobs"]["test"]))
    for name in ("maven-central", "wheels"):
        assert wf["jobs"][name]["needs"] == "test", name
    assert wf["jobs"]["pypi"]["needs"] == "wheels"


def test_release_publishes_signed_maven_artifacts_with_sources_and_javadoc():
    job = load_release()["jobs"]["maven-central"]
    [deploy] = [r for r in runs(job) if " deploy" in r]
    assert "-Ppublish,release" in deploy
    setup = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-java"))["with"]
    assert setup["server-id"] == "central" and "gpg-private-key" in setup
    pom = (ROOT / "pom.xml").read_text()
    for needed in ("<id>publish</id>", "maven-source-plugin", "maven-javadoc-plugin", "<id>release</id>",
                   "maven-gpg-plugin", "central-publishing-maven-plugin", "<publishingServerId>central</publishingServerId>",
                   "<licenses>", "<developers>", "<scm>", "<url>"):
        assert needed in pom, needed


def test_release_uploads_the_wheels_by_trusted_publishing():
    wf = load_release()
    assert any("scripts/wheels.sh" in r for r in runs(wf["jobs"]["wheels"]))
    job = wf["jobs"]["pypi"]
    assert job["permissions"] == {"id-token": "write"}
    [publish] = [s for s in job["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish")]
    assert "password" not in publish.get("with", {})  # trusted publishing: no token
    assert wf["permissions"] == {"contents": "read"}


def test_every_script_the_release_runs_exists_and_is_executable():
    for job in load_release()["jobs"].values():
        for command in runs(job):
            for path in re.findall(r"(?:\./)?((?:scripts|tests)/[\w/.-]+\.sh)", command):
                f = ROOT / path
                assert f.is_file() and f.stat().st_mode & 0o111, path


def test_the_release_version_check_rejects_a_tag_that_does_not_match():
    script = ROOT / "scripts" / "release-version.sh"
    assert subprocess.run([str(script), "check", "0.0.1"], capture_output=True).returncode != 0
    pom = (ROOT / "pom.xml").read_text()
    current = re.search(r"^  <version>([0-9.]+)(?:-SNAPSHOT)?</version>$", pom, re.M).group(1)
    result = subprocess.run([str(script), "check", current], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
