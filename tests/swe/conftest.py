"""Fixtures for the swe family's tests: task loading and toolchain-aware skips."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml

from envhub.config import REPO_ROOT
from envhub.tasks.model import Task
from environments.swe import toolchains

SWE_TASKS = REPO_ROOT / "tasks" / "swe"
#: The hand-written tasks (`<language>/<name>/`); the factory's live one level down, by package
#: (`<language>/<package>/<name>/`).
HAND_WRITTEN = sorted(p.parent for p in SWE_TASKS.glob("*/*/task.yaml"))
FACTORY = sorted(p.parent for p in SWE_TASKS.glob("*/*/*/task.yaml"))
_present: dict[str, bool] = {}


def toolchain_present(language: str) -> bool:
    if language not in _present:
        _present[language] = toolchains.status(language).present
    return _present[language]


def load(task_id: str) -> Task:
    return Task.load(REPO_ROOT / "tasks" / task_id)


def required(language: str) -> bool:
    """Whether the set-up was to install this toolchain: `make test` sets ENVHUB_SWE_REQUIRED from
    ENVHUB_SWE_LANGUAGES ("all" by default, "python,go" for a light install, "none")."""
    wanted = os.environ.get("ENVHUB_SWE_REQUIRED", "").replace(",", " ").split()
    return "all" in wanted or language in wanted


def require_toolchain(language: str) -> None:
    """Skip a test whose toolchain is absent, unless the set-up was to install it: then fail, so a
    broken install never passes as a row of skips."""
    if not toolchain_present(language):
        tc = toolchains.TOOLCHAINS[language]
        why = f"{language} toolchain absent (`{tc.check}` fails): envhub toolchains install {language}"
        if required(language):
            wanted = os.environ["ENVHUB_SWE_REQUIRED"]
            pytest.fail(f"{why}; the set-up was to install it (ENVHUB_SWE_REQUIRED={wanted})", pytrace=False)
        pytest.skip(why)


#: A task whose toolchain is present (python) and a copy of a go task whose `toolchain.check`
#: names a command that does not exist: a real lacking toolchain, for the availability tests.
GOOD, LACKING = "swe/python/interval-merge", "swe/go/lru-evict"
NO_SUCH = "command -v envhub-no-such-toolchain"


def lacking_tasks(root: Path, with_good: bool = True) -> Path:
    """A tasks root holding LACKING (and GOOD unless `with_good` is false)."""
    for task_id in ([GOOD] if with_good else []) + [LACKING]:
        shutil.copytree(REPO_ROOT / "tasks" / task_id, root / task_id)
    config = root / LACKING / "task.yaml"
    data = yaml.safe_load(config.read_text())
    data["metadata"]["toolchain"]["check"] = NO_SUCH
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    return root


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
