"""Finding the jar a Python package carries.

In order: the environment variable the package names (a path to the jar), the package's own
``jars/`` folder (where the wheel build puts it), then the Maven target folder of the source
checkout the package sits in (editable installs and the project's own tests).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["JarNotFoundError", "find_jar"]


class JarNotFoundError(RuntimeError):
    """The jar is in none of the places; the message names them and how to build it."""


def find_jar(package_dir, pattern: str, env_var: str, checkout_target: str) -> Path:
    """The jar matching ``pattern`` (a file-name glob, e.g. ``"safetensors-sampler-*-all.jar"``).

    ``package_dir``: the package's folder (its ``jars/`` holds the carried jar); ``env_var``: the
    variable that overrides; ``checkout_target``: the Maven module's target folder relative to the
    repository root (e.g. ``"java/sampler/target"``).
    """
    env = os.environ.get(env_var)
    if env:
        if not Path(env).is_file():
            raise JarNotFoundError(f"${env_var}={env}: no such file")
        return Path(env)
    here = Path(package_dir).resolve()
    carried = sorted((here / "jars").glob(pattern))
    if carried:
        return carried[-1]
    for parent in here.parents:
        built = sorted((parent / checkout_target).glob(pattern))
        if built:
            return built[-1]
    raise JarNotFoundError(
        f"the jar {pattern} is not in this installation ({here / 'jars'}): reinstall the wheel, set ${env_var} "
        f"to the jar, or, in a source checkout, build it with 'mvn -B -ntp -DskipTests package' ({checkout_target})")
