"""Session checks and fixtures for the interop suite."""

import ml_dtypes
import numpy as np
import pytest

from dtypes import F8_NUMPY_NAMES
from helpers import JAR, ROOT


def pytest_sessionstart(session):
    if not JAR.is_file():
        pytest.exit(
            f"{JAR.relative_to(ROOT)} is missing: build it first with "
            "'mvn -B -ntp -DskipTests package' (scripts/test.sh does).",
            returncode=2,
        )


@pytest.fixture
def f8_numpy_aliases(monkeypatch):
    """safetensors 0.8.0's numpy loader looks up numpy.float8_* names; give it ml_dtypes' types."""
    for name in F8_NUMPY_NAMES.values():
        monkeypatch.setattr(np, name, getattr(ml_dtypes, name), raising=False)
