"""Starting the embedded JVM: which JDK, which jar, which flags.

One JVM per process (a JPype limit): the first Sampler starts it with the defaults below, or call
:func:`start_jvm` first to choose. JDK: ``java_home`` argument, else ``JAVA_HOME`` if it is at least
Java 25, else the newest JDK 25+ under /usr/lib/jvm (the same search as the repository's
scripts/env.sh). Jar: ``jar`` argument, else ``$SAFETENSORS_SAMPLER_JAR``, else a jar copied into
this package's ``jars/`` folder, else ``java/sampler/target/safetensors-sampler-*-all.jar`` of the
source checkout this package sits in (editable installs and tests).
"""

from __future__ import annotations

import glob
import os
import re
import threading
from pathlib import Path

import jpype

from . import _lifecycle
from ._errors import SamplerError

MIN_JAVA = 25
JAR_ENV = "SAFETENSORS_SAMPLER_JAR"
JAR_GLOB = "safetensors-sampler-*-all.jar"
# FFM: the core library calls its native kernels; without this the JVM warns on first use.
DEFAULT_JVM_ARGS = ("--enable-native-access=ALL-UNNAMED",)

_lock = threading.Lock()


def _java_major(home: Path) -> int:
    """The feature version from ``<home>/release`` (``JAVA_VERSION="25.0.3"``), 0 if unreadable."""
    try:
        text = (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    m = re.search(r'^JAVA_VERSION="(\d+)', text, re.MULTILINE)
    return int(m.group(1)) if m else 0


def _libjvm(home: Path) -> Path | None:
    for rel in ("lib/server/libjvm.so", "lib/server/libjvm.dylib", "bin/server/jvm.dll"):
        p = home / rel
        if p.is_file():
            return p
    return None


def find_java_home() -> Path:
    """The JDK to embed (see the module docstring); raises SamplerError saying where it looked."""
    env = os.environ.get("JAVA_HOME")
    if env and _java_major(Path(env)) >= MIN_JAVA and _libjvm(Path(env)):
        return Path(env)
    best, best_major = None, 0
    for pattern in ("/usr/lib/jvm/*", "/opt/java/*", "/Library/Java/JavaVirtualMachines/*/Contents/Home"):
        for cand in glob.glob(pattern):
            home = Path(cand)
            major = _java_major(home)
            if major >= MIN_JAVA and major > best_major and _libjvm(home):
                best, best_major = home, major
    if best is None:
        raise SamplerError(
            f"no JDK {MIN_JAVA} or newer found: JAVA_HOME={env or '<unset>'} is missing or older, and "
            "none under /usr/lib/jvm; install a JDK 25 (e.g. Temurin 25) and set JAVA_HOME")
    return best


def find_sampler_jar() -> Path:
    """The sampler's shaded jar (see the module docstring); raises SamplerError naming the options."""
    env = os.environ.get(JAR_ENV)
    if env:
        if not Path(env).is_file():
            raise SamplerError(f"${JAR_ENV}={env}: no such file")
        return Path(env)
    here = Path(__file__).resolve().parent
    bundled = sorted((here / "jars").glob(JAR_GLOB))
    if bundled:
        return bundled[-1]
    for parent in here.parents:
        built = sorted((parent / "java" / "sampler" / "target").glob(JAR_GLOB))
        if built:
            return built[-1]
    raise SamplerError(
        f"the sampler jar ({JAR_GLOB}) was not found: set ${JAR_ENV}, or pass jar= to start_jvm(), "
        "or build it in the source checkout with 'mvn -B -ntp -pl java/sampler -am package -DskipTests'")


def jvm_started() -> bool:
    return jpype.isJVMStarted()


def start_jvm(jar: str | os.PathLike | None = None, java_home: str | os.PathLike | None = None,
              jvm_args: tuple[str, ...] | list[str] = (),
              extra_classpath: tuple[str | os.PathLike, ...] | list[str | os.PathLike] = ()) -> None:
    """Starts the JVM with the sampler jar (once per process; later calls with no arguments are no-ops).

    ``jvm_args`` are added to the defaults (e.g. ``"-Xmx2g"``); ``extra_classpath`` entries (jars or
    class directories of your own) follow the sampler jar. Calling it with arguments after the JVM
    is running raises SamplerError, since JPype cannot restart it.
    """
    with _lock:
        if jpype.isJVMStarted():
            if jar is not None or java_home is not None or jvm_args or extra_classpath:
                raise SamplerError("the JVM is already running in this process; start_jvm() options must come "
                                   "before the first Sampler")
            return
        home = Path(java_home) if java_home is not None else find_java_home()
        libjvm = _libjvm(home)
        if libjvm is None:
            raise SamplerError(f"{home}: no libjvm (looked in lib/server); is it a JDK?")
        if _java_major(home) < MIN_JAVA:
            raise SamplerError(f"{home}: Java {_java_major(home) or '?'}; the sampler needs Java {MIN_JAVA}+")
        jar_path = Path(jar) if jar is not None else find_sampler_jar()
        if not jar_path.is_file():
            raise SamplerError(f"{jar_path}: no such jar")
        jpype.startJVM(str(libjvm), *DEFAULT_JVM_ARGS, *jvm_args, classpath=[str(jar_path), *(str(p) for p in extra_classpath)],
                       convertStrings=False)
        _lifecycle.register_exit_hook()
