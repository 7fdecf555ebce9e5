"""Fixtures for the episode store: a real echo hub whose store is a temp SQLite file."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from envhub.config import REPO_ROOT, Settings, get_settings
from envhub.core.hub import Hub
from envhub.spec import ResetRequest, StepRequest, ToolCall
from envhub.store import EpisodeStore
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


def _hub_with_store(data_dir: Path, url: str | None = None, **store_kw: Any) -> Hub:
    """A hub whose store has test-sized timeouts (`Hub.build`'s own wiring is tested by the round trip)."""
    settings = echo_settings(data_dir, store_enabled=False, database_url=url)
    hub = Hub.build(settings)
    hub.store = EpisodeStore(settings.store_url, spill_dir=data_dir / "store-spill", **store_kw)
    hub.manager.observers.append(hub.store.writer)
    return hub


async def _run_episode(hub: Hub, messages: list[str], *, verify: bool = True, policy: str | None = None) -> str:
    """One echo episode through the session manager, closed at the end; returns its id."""
    m = hub.manager
    c = await m.create(ResetRequest(env="echo", task_id="echo/say-done", policy_version=policy))
    for msg in messages:
        await m.step(c.session_id, StepRequest(action=ToolCall(tool="echo", arguments={"message": msg})))
    if verify:
        await m.verify(c.session_id)
    await m.close(c.session_id)
    return c.session_id


@pytest.fixture
def hub_with_store() -> Callable[..., Hub]:
    return _hub_with_store


@pytest.fixture
def run_episode() -> Callable[..., Awaitable[str]]:
    return _run_episode
