import os
import shutil
from pathlib import Path

import pytest

import safetensors_jvm_sampler as hw

ROOT = Path(__file__).resolve().parents[3]
HEADWATER = ROOT / "java" / "sampler" / "src" / "test" / "resources" / "headwater-tiny" / "expected"


def pytest_configure(config):
    # One JVM for the whole session; small heap, the machine is shared.
    hw.start_jvm(jvm_args=["-Xmx512m"])


@pytest.fixture(scope="session")
def headwater_db() -> Path:
    return HEADWATER / "db"


@pytest.fixture(scope="session")
def headwater_expected() -> Path:
    return HEADWATER


@pytest.fixture(scope="session")
def synth_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("synth") / "db"
    hw.generate_synthetic_database(path, rows=3000, seed=7)
    return path


@pytest.fixture
def db_copy(headwater_db, tmp_path) -> Path:
    dst = tmp_path / "db"
    shutil.copytree(headwater_db, dst)
    return dst


def sampler_env() -> dict:
    """Environment for child interpreters (they find the jar the same way)."""
    return dict(os.environ)
