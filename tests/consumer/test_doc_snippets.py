"""Every code block of README.md and docs/*.md runs or is checked, so a snippet that drifts from the
code fails the build: Java blocks compile against the deployed artifacts by coordinates and run;
Python blocks run, a guide's blocks in order in one interpreter; shell blocks name scripts that
exist, packages, extras and console scripts the Python projects declare, and CLI subcommands and
options the CLI's own --help lists; XML blocks name published artifacts."""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from snippets import ROOT, all_snippets, commands, docs, setup, snippets
from test_consumer import SETTINGS, fresh_consumer_repo, run

KNOWN = {"java", "python", "bash", "xml", "text"}
JAVA_IMPORTS = """
import io.github.semyonsinchenko.safetensors.format.*;
import io.github.semyonsinchenko.safetensors.io.*;
import io.github.semyonsinchenko.safetensors.kernels.*;
import io.github.semyonsinchenko.safetensors.loader.*;
import io.github.semyonsinchenko.safetensors.sampler.*;
import io.github.semyonsinchenko.safetensors.sampler.synth.*;
import java.lang.foreign.*;
import java.nio.channels.*;
import java.nio.file.*;
import java.util.*;
import org.apache.hadoop.conf.Configuration;
"""


def test_every_block_names_a_language_the_checks_know():
    unknown = [f"{s.where} {s.lang}" for s in all_snippets() if s.lang not in KNOWN]
    assert not unknown, unknown
    assert all_snippets("java") and all_snippets("python") and all_snippets("bash")


def java_class(doc: Path, name: str) -> str:
    methods, calls = [], []
    for i, s in enumerate(x for x in snippets(doc) if x.lang == "java"):
        pre = setup(doc, "java", i + 1)
        methods.append(f"    // {s.where}\n    static void snippet{i}() throws Throwable {{\n{pre}\n{s.code}\n    }}\n")
        calls.append(f'        System.out.println("snippet {s.where}");\n        snippet{i}();\n')
    return (f"package snippets;\n{JAVA_IMPORTS}\npublic final class {name} {{\n"
            f"    public static void main(String[] args) throws Throwable {{\n{''.join(calls)}    }}\n\n"
            f"{''.join(methods)}}}\n")


def test_java_snippets_compile_by_coordinates_and_run(tmp_path):
    project = tmp_path / "jvm"
    shutil.copytree(ROOT / "examples" / "jvm", project)
    pkg = project / "src" / "main" / "java" / "snippets"
    pkg.mkdir(parents=True)
    classes = {}
    for doc in docs():
        if any(s.lang == "java" for s in snippets(doc)):
            name = "Doc_" + re.sub(r"\W", "_", doc.stem)
            (pkg / f"{name}.java").write_text(java_class(doc, name))
            classes[name] = doc
    m2 = fresh_consumer_repo()
    mvn = ["mvn", "-B", "-ntp", "-q", "-s", SETTINGS, f"-Dmaven.repo.local={m2}"]
    proc = subprocess.run([str(c) for c in [*mvn, "package", "dependency:build-classpath",
                                            "-Dmdep.outputFile=cp.txt"]], cwd=project, capture_output=True, text=True)
    assert proc.returncode == 0, "a Java snippet does not compile:\n" + proc.stdout[-6000:]
    classpath = f"{project / 'target' / 'classes'}{os.pathsep}{(project / 'cp.txt').read_text().strip()}"
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
    for name, doc in classes.items():
        work = tmp_path / name
        work.mkdir()
        run([java, "--enable-native-access=ALL-UNNAMED", "-cp", classpath, f"snippets.{name}"], work)


@pytest.mark.parametrize("doc", [d for d in docs() if any(s.lang == "python" for s in snippets(d))],
                         ids=lambda d: str(d.relative_to(ROOT)))
def test_python_snippets_run(doc, tmp_path):
    # The guide's set-up once; then each snippet in a copy of its namespace (what one snippet assigns,
    # e.g. its own df, does not leak into the next), in order, sharing the working directory.
    blocks = [(s.where, s.code) for s in snippets(doc) if s.lang == "python"]
    script = tmp_path / "snippets.py"
    script.write_text(
        f"base = {{'__name__': '__main__'}}\nexec(compile({setup(doc, 'python')!r}, 'setup', 'exec'), base)\n"
        f"for where, code in {blocks!r}:\n"
        "    print(where, flush=True)\n"
        "    exec(compile(code, where, 'exec'), dict(base))\n")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{doc.name}: the last snippet started:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"


def python_projects() -> dict:
    out = {}
    for path in (ROOT / "python").glob("*/pyproject.toml"):
        project = tomllib.loads(path.read_text())["project"]
        out[project["name"]] = project
    return out


def cli_help(*subcommands: str) -> str:
    proc = subprocess.run([str(ROOT / "bin" / "safetensors"), *subcommands, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0, f"bin/safetensors {' '.join(subcommands)} --help: {proc.stderr}"
    return proc.stdout


def check_cli(words: list[str], where: str):
    path = []
    for w in words:
        if w.startswith("-") or w.startswith("[") or w.startswith("<"):
            break
        if f"  {w} " in cli_help(*path) or f"  {w}\n" in cli_help(*path):
            path.append(w)
        else:
            break
    assert path, f"{where}: bin/safetensors {' '.join(words)}: no such subcommand"
    text = cli_help(*path)
    for opt in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", " ".join(words)):
        assert opt in text, f"{where}: bin/safetensors {' '.join(path)} has no option {opt}"


def check_pip(words: list[str], where: str):
    projects = python_projects()
    for req in (w for w in words[1:] if not w.startswith("-")):
        if req.startswith("./") or req.startswith("python/"):
            assert (ROOT / req).is_dir(), f"{where}: {req} is not a project folder"
            continue
        m = re.fullmatch(r"([\w.-]+)(?:\[([\w,-]+)\])?", req)
        assert m and m.group(1) in projects, f"{where}: {req} is not one of our distributions {sorted(projects)}"
        extras = projects[m.group(1)].get("optional-dependencies", {})
        for extra in (m.group(2) or "").split(",") if m.group(2) else []:
            assert extra in extras, f"{where}: {m.group(1)} has no extra [{extra}]"


def check_shell_line(line: str, where: str):
    words = shlex.split(line)
    head = words[0]
    if head in ("bin/safetensors",):
        check_cli(words[1:], where)
    elif head.startswith("./scripts/") or head.startswith("scripts/"):
        script = ROOT / head
        assert script.is_file() and os.access(script, os.X_OK), f"{where}: {head} is not an executable script"
    elif head == "pip" or words[:2] == ["uv", "pip"]:
        check_pip(words[1:] if head == "pip" else words[2:], where)
    elif head == "safetensors-preprocess":
        scripts = python_projects()["safetensors-jvm-sampler"]["scripts"]
        assert head in scripts, f"{where}: no console script {head}"
    elif head == "mvn":
        for module in ",".join(words[words.index("-pl") + 1:words.index("-pl") + 2]).split(",") if "-pl" in words else []:
            assert (ROOT / module / "pom.xml").is_file(), f"{where}: no module {module}"
        for arg in words:
            if arg.startswith("-Dartifact=io.github.semyonsinchenko:"):
                artifact = arg.split(":")[1]
                assert artifact in published(), f"{where}: {artifact} is not published"
    elif words[:3] == ["java", "-jar", "safetensors-cli-all.jar"]:
        check_cli(words[3:], where)
    elif head == "spark-submit":
        for arg in words:
            if arg.startswith("io.github.semyonsinchenko:"):
                artifact = arg.split(":")[1]
                assert artifact in published(), f"{where}: {artifact} is not published"
            if arg.endswith(".jar") and not arg.startswith("-"):
                assert "target/" in arg, f"{where}: {arg}"
    elif head == "export":
        pass
    else:
        raise AssertionError(f"{where}: the snippet check does not know the command {head!r}")


def published() -> set:
    repo = Path(os.environ["ST_DEPLOYED_REPO"].removeprefix("file://")) / "io" / "github" / "semyonsinchenko"
    return {p.name for p in repo.iterdir()}


def test_shell_snippets_name_what_exists():
    for s in all_snippets("bash"):
        for line in commands(s.code):
            check_shell_line(line, s.where)


def test_xml_snippets_name_published_artifacts():
    for s in all_snippets("xml"):
        root = ET.fromstring(f"<snippet>{s.code}</snippet>")
        for dep in root.iter("dependency"):
            assert dep.findtext("groupId") == "io.github.semyonsinchenko", s.where
            assert dep.findtext("artifactId") in published(), s.where
