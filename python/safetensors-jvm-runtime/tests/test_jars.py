"""Finding a carried jar: the variable, the package's jars/ folder, the checkout's target folder."""

import pytest

from safetensors_jvm_runtime.jars import JarNotFoundError, find_jar


def test_order(tmp_path, monkeypatch):
    monkeypatch.delenv("X_JAR", raising=False)
    pkg = tmp_path / "repo" / "python" / "x" / "src" / "x"
    (pkg / "jars").mkdir(parents=True)
    target = tmp_path / "repo" / "mod" / "target"
    target.mkdir(parents=True)
    (target / "x-0.1.0-all.jar").write_bytes(b"")
    assert find_jar(pkg, "x-*-all.jar", "X_JAR", "mod/target") == target / "x-0.1.0-all.jar"
    (pkg / "jars" / "x-0.1.0-all.jar").write_bytes(b"")
    assert find_jar(pkg, "x-*-all.jar", "X_JAR", "mod/target") == pkg / "jars" / "x-0.1.0-all.jar"
    own = tmp_path / "own.jar"
    own.write_bytes(b"")
    monkeypatch.setenv("X_JAR", str(own))
    assert find_jar(pkg, "x-*-all.jar", "X_JAR", "mod/target") == own
    monkeypatch.setenv("X_JAR", str(tmp_path / "missing.jar"))
    with pytest.raises(JarNotFoundError, match=r"\$X_JAR=.*missing.jar: no such file"):
        find_jar(pkg, "x-*-all.jar", "X_JAR", "mod/target")


def test_missing_everywhere_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.delenv("X_JAR", raising=False)
    with pytest.raises(JarNotFoundError, match="reinstall the wheel, set \\$X_JAR"):
        find_jar(tmp_path, "x-*-all.jar", "X_JAR", "mod/target")
