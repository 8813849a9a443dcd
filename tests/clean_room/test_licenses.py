"""Every jar a user runs and every wheel carries the repository's LICENSE (Apache-2.0) and NOTICE."""

import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

LICENSE = (ROOT / "LICENSE").read_bytes()
NOTICE = (ROOT / "NOTICE").read_bytes()
# The jars a user runs or depends on: each module's own jar and the shaded ones (the CLI's fixed name
# included); not the tests, sources and javadoc jars.
SKIP = ("-tests.jar", "-sources.jar", "-javadoc.jar", "-test-sources.jar")


def runtime_jars():
    jars = [p for p in ROOT.glob("**/target/*.jar")
            if not p.name.endswith(SKIP) and not {"bench", "testkit-hdfs", "architecture", ".venv"}
            & set(p.relative_to(ROOT).parts)]
    return sorted(jars)


def test_the_root_has_the_apache_license_and_a_notice():
    assert LICENSE.lstrip().startswith(b"Apache License") and b"Version 2.0, January 2004" in LICENSE
    assert b"END OF TERMS AND CONDITIONS" in LICENSE
    assert NOTICE.startswith(b"safetensors-jvm\n")


def test_there_are_jars_to_check():
    names = {p.name for p in runtime_jars()}
    for expected in ("safetensors-cli.jar", "safetensors-core-", "safetensors-spark_2.13-", "-all.jar"):
        assert any(expected in n for n in names), (expected, names)


@pytest.mark.parametrize("jar", runtime_jars(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_jar_carries_license_and_notice(jar: Path):
    with zipfile.ZipFile(jar) as z:
        assert z.read("META-INF/LICENSE") == LICENSE, jar
        assert z.read("META-INF/NOTICE").startswith(NOTICE.rstrip(b"\n")), jar


def test_every_wheel_carries_license_and_notice(tmp_path):
    from conftest import wheel

    for name in ("safetensors_jvm_runtime", "safetensors_jvm_sampler", "safetensors_spark"):
        with zipfile.ZipFile(wheel(name)) as z:
            dist_info = next(n.split("/")[0] for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            assert z.read(f"{dist_info}/licenses/LICENSE") == LICENSE, name
            assert z.read(f"{dist_info}/licenses/NOTICE") == NOTICE, name
            metadata = z.read(f"{dist_info}/METADATA").decode()
            assert "License-Expression: Apache-2.0" in metadata and "License-File: NOTICE" in metadata, name
