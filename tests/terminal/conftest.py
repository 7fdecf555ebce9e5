"""Fixtures for the terminal family's tests: a real in-process hub over the repo's tasks.

The hub gets a private data folder (world-traversable, under /var/tmp, so sandbox uids can reach
it) that borrows the installed verifier site packages, so these tests never race other suites
over the shared verifier library copy.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from envhub.config import REPO_ROOT, Settings, get_settings
from envhub.core.hub import Hub
from envhub.verify import runtime
from tests.conftest import running_hub

#: Harbor sample tasks hold their own test_*.py files, which are data here, not our tests.
collect_ignore_glob = ["fixtures/*"]


@pytest.fixture(scope="session")
def data_dir() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="envhub-terminal-", dir="/var/tmp"))
    root.chmod(0o755)
    shared = get_settings().data_dir
    runtime.install(shared)  # no-op when the site is installed and current
    (root / "verifier").mkdir()
    (root / "verifier").chmod(0o755)
    os.symlink(runtime.site_dir(shared), runtime.site_dir(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def hub_settings(data_dir: Path, tasks_dir: Path | None = None) -> Settings:
    return Settings(data_dir=data_dir, tasks_dir=tasks_dir or REPO_ROOT / "tasks", families=["terminal"])


@pytest.fixture(scope="session")
def make_settings(data_dir: Path):
    """Settings for a terminal-only hub over `tasks_dir` (the repo's tasks by default)."""
    return lambda tasks_dir=None: hub_settings(data_dir, tasks_dir)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def hub(data_dir: Path) -> AsyncIterator[Hub]:
    async with running_hub(hub_settings(data_dir)) as h:
        yield h
