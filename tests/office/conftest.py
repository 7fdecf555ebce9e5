"""Shared fixtures for the office family's tests: an in-process hub and a warm LibreOffice."""

from __future__ import annotations

from pathlib import Path

import pytest

from envhub.config import REPO_ROOT, Settings
from environments.office.lo import LibreOffice
from tests.conftest import running_hub

TASKS = REPO_ROOT / "tasks"


@pytest.fixture
async def hub():
    async with running_hub(Settings(tasks_dir=TASKS, families=["office"])) as h:
        yield h


@pytest.fixture
def office(tmp_path: Path):
    lo = LibreOffice(tmp_path / "lo", deadline_s=30)
    yield lo
    lo.kill()
