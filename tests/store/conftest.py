"""Fixtures for the episode store: a real echo hub whose store is a temp SQLite file."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from envhub.config import REPO_ROOT, Settings, get_settings
from envhub.verify import runtime


@pytest.fixture(scope="session")
def verifier_site() -> Path:
    shared = get_settings().data_dir
    runtime.install(shared)  # no-op when installed and current
    return runtime.site_dir(shared)


@pytest.fixture
def data_dir(verifier_site: Path) -> Iterator[Path]:
    """A world-traversable data folder (sandbox uids must reach it) borrowing the verifier site."""
    root = Path(tempfile.mkdtemp(prefix="envhub-store-", dir="/var/tmp"))
    root.chmod(0o755)
    (root / "verifier").mkdir()
    (root / "verifier").chmod(0o755)
    os.symlink(verifier_site, runtime.site_dir(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def echo_settings(data_dir: Path, **extra: object) -> Settings:
    return Settings(data_dir=data_dir, tasks_dir=REPO_ROOT / "tasks", families=["echo"], **extra)
