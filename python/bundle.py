"""Hatch build hook shared by the Python packages: puts the jars a package carries (built by Maven
first) into ``<package>/jars/``. (LICENSE and NOTICE reach each wheel's ``.dist-info/licenses/``
through the package folder's symbolic links to the repository's files.)

Configured per package in pyproject.toml::

    [tool.hatch.build.targets.wheel.hooks.custom]
    path = "../bundle.py"
    package = "safetensors_jvm_sampler"          # where jars go (omit when there are none)
    jars = ["java/sampler/target/safetensors-sampler-*-all.jar"]   # globs from the repository root

Each glob must match exactly one file. Editable installs get no jars: the packages then find the
jars in the source checkout's Maven target folders.
"""

from __future__ import annotations

import glob
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT = Path(__file__).resolve().parent.parent


class BundleHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version, build_data):
        if version == "editable":
            return
        package = self.config.get("package")
        for pattern in self.config.get("jars", []):
            matches = sorted(glob.glob(str(ROOT / pattern)))
            if len(matches) != 1:
                raise RuntimeError(
                    f"{pattern}: {'no file' if not matches else f'{len(matches)} files'} in {ROOT}; build the jars "
                    "first with 'mvn -B -ntp -DskipTests package' (scripts/wheels.sh does)")
            jar = Path(matches[0])
            build_data["force_include"][str(jar)] = f"{package}/jars/{jar.name}"
