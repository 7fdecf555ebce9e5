"""Fixtures for the swe family's tests: task loading and toolchain-aware skips."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from envhub.config import REPO_ROOT
from envhub.tasks.model import Task
from environments.swe import toolchains

SWE_TASKS = REPO_ROOT / "tasks" / "swe"
_present: dict[str, bool] = {}


def toolchain_present(language: str) -> bool:
    if language not in _present:
        _present[language] = toolchains.status(language).present
    return _present[language]


def load(task_id: str) -> Task:
    return Task.load(REPO_ROOT / "tasks" / task_id)


def require_toolchain(language: str) -> None:
    if not toolchain_present(language):
        tc = toolchains.TOOLCHAINS[language]
        pytest.skip(f"{language} toolchain absent (`{tc.check}` fails): envhub toolchains install {language}")


@pytest.fixture
def python_task() -> Task:
    require_toolchain("python")
    return load("swe/python/interval-merge")


@pytest.fixture
def base_checkout(python_task: Task) -> Path:
    """A throwaway copy of the python task's base checkout."""
    from environments.swe.authoring import git  # noqa: F401 - same git helper the family uses
    from environments.swe.repo import clone_base

    d = Path(tempfile.mkdtemp(prefix="swe-test-"))
    clone_base(python_task, d / "repo")
    yield d / "repo"
    shutil.rmtree(d, ignore_errors=True)
