"""Fresh venvs holding only the built wheels, pyspark and their declared dependencies, and the
environment a user with only Java 17 has: JAVA_HOME unset, Java 17 first on PATH."""

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYSPARK = "pyspark==4.2.0"
# The user's machine: Java 17 (the default java here, as on most PySpark installs).
JAVA17_HOMES = ("/usr/lib/jvm/java-17-openjdk-*", "/usr/lib/jvm/temurin-17-jdk-*", "/usr/lib/jvm/java-17-*")


def java17_home() -> Path:
    for pattern in JAVA17_HOMES:
        found = sorted(glob.glob(pattern))
        if found:
            return Path(found[0])
    pytest.fail(f"no Java 17 on this machine (looked for {', '.join(JAVA17_HOMES)}): the clean room needs one")


def wheel(name: str) -> Path:
    found = sorted(Path(os.environ["ST_WHEELS"]).glob(f"{name}-*.whl"))
    assert len(found) == 1, f"{name}: {found} in $ST_WHEELS (run.sh builds them with scripts/wheels.sh)"
    return found[0]


def user_env(venv: Path | None = None, **extra) -> dict:
    """The user's environment: no JAVA_HOME, no project variables, Java 17 first on PATH."""
    keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "TERM")
    # The machine's network settings (certificate bundle, proxies) are the user's too.
    network = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT",
               "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
    env = {k: os.environ[k] for k in keep + network if k in os.environ}
    path = [str(java17_home() / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]
    if venv is not None:
        path.insert(0, str(venv / "bin"))
    env["PATH"] = os.pathsep.join(path)
    env.update(extra)
    return env


def jdk25_beside() -> dict:
    """Where the machine's JDK 25 is found: the usual install places when it is there (as on a
    developer's machine), else also the JDK the test command runs on (a CI runner keeps its JDKs in
    a tool cache; setup-java's JAVA_HOME points there)."""
    for release in glob.glob("/usr/lib/jvm/*/release") + glob.glob("/opt/java/*/release"):
        text = Path(release).read_text(errors="replace")
        if any(f'JAVA_VERSION="{v}' in text for v in range(25, 40)):
            return {}
    usual = "/usr/lib/jvm/*:/usr/java/*:/opt/java/*:/Library/Java/JavaVirtualMachines/*/Contents/Home"
    return {"SAFETENSORS_JDK_SEARCH": usual + os.pathsep + os.environ["JAVA_HOME"]}


def run(cmd, env, cwd, timeout=900) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    sys.stdout.write(f"$ {' '.join(str(c) for c in cmd)}\n{proc.stdout}")
    assert proc.returncode == 0, f"{cmd[0]} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return proc


def make_venv(path: Path, *requirements, pip: bool = False) -> Path:
    """A fresh venv with ``requirements`` installed the way a user would: by pip (``pip=True``, the
    exact command users type) or by uv; the project's own wheels come from the wheel folder."""
    env = user_env()
    if pip:
        run([sys.executable, "-m", "venv", path], env, path.parent)
        run([path / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "--find-links", os.environ["ST_WHEELS"], *requirements], env, path.parent)
    else:
        uv = os.environ["ST_UV"]
        run([uv, "venv", "--quiet", "--python", sys.executable, path], env, path.parent)
        run([uv, "pip", "install", "--quiet", "--python", path / "bin" / "python", "--find-links",
             os.environ["ST_WHEELS"], *requirements], env, path.parent)
    return path
