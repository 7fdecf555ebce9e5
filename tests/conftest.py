"""Shared fixtures: a real hub in-process (`running_hub`), the app without a socket (`in_process`),
and a real server on a free port (`envhub.server.thread.serve_in_thread`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from envhub.client.asgi import InProcess
from envhub.config import Settings, get_settings
from envhub.core.hub import Hub
from envhub.env import Environment
from envhub.server.app import create_app
from envhub.server.thread import ThreadedServer, serve_in_thread
from envhub.verify import runtime

# CI (CI=true) draws the same property-test examples on every run, so a red build is reproducible;
# elsewhere each run explores new ones.
hypothesis_settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")

_DATA_DIR = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    """The suite runs in a data folder of its own, so its episodes never land in the user's store
    (nor theirs on the suite's pages). It borrows the installed verifier site; subprocesses
    (`envhub` commands, served pages) inherit it through `ENVHUB_DATA_DIR`, and the SWE factory's
    fetched sources."""
    shared = get_settings().data_dir
    runtime.install(shared)  # no-op when installed and current
    root = Path(tempfile.mkdtemp(prefix="envhub-tests-", dir="/var/tmp"))  # sandbox uids must reach it
    root.chmod(0o755)
    (root / "verifier").mkdir(mode=0o755)
    os.symlink(runtime.site_dir(shared).resolve(), runtime.site_dir(root))
    # ... and the fetched SWE package sources (an install step, like the verifier site).
    (shared / "swe-sources").mkdir(parents=True, exist_ok=True)
    os.symlink((shared / "swe-sources").resolve(), root / "swe-sources")
    # ... and the materialised task sets (immutable folders named by their generator's digest), for
    # every data folder a test makes of its own too.
    os.environ["ENVHUB_TASK_SETS_DIR"] = str(get_settings().task_sets_cache)
    os.environ["ENVHUB_DATA_DIR"] = str(root)
    os.environ.pop("ENVHUB_DATABASE_URL", None)  # nor into the user's database
    get_settings.cache_clear()
    config.stash[_DATA_DIR] = root


def pytest_unconfigure(config: pytest.Config) -> None:
    root = config.stash.get(_DATA_DIR, None)
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)


def make_settings(**overrides) -> Settings:
    return get_settings().model_copy(update=overrides)


@contextlib.asynccontextmanager
async def running_hub(settings: Settings) -> AsyncIterator[Hub]:
    """A hub built from `settings` and started, stopped when the block ends: the one way a test
    runs a hub in-process (fixtures of any scope wrap it)."""
    h = Hub.build(settings)
    await h.start()
    try:
        yield h
    finally:
        await h.stop()


@pytest.fixture
async def hub() -> AsyncIterator[Hub]:
    """An in-process hub serving echo and terminal (what the server does underneath)."""
    async with running_hub(make_settings(families=["echo", "terminal"])) as h:
        yield h


@pytest.fixture(scope="session")
def live_server() -> Iterator[ThreadedServer]:
    """A real uvicorn server (echo + terminal) shared by the protocol tests."""
    with serve_in_thread(make_settings(families=["echo", "terminal"])) as server:
        yield server


@pytest.fixture
def in_process() -> Iterator[InProcess]:
    """The app (echo + terminal) in this process without a socket: `transport()` for `EnvClient`,
    `async_transport()` for `AsyncEnvClient`."""
    with InProcess(create_app(make_settings(families=["echo", "terminal"]))) as app:
        yield app


@pytest.fixture
def echo_cannot_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Echo as a family that cannot copy a live episode (every registered family can): `Environment`'s
    defaults, which answer `NotSupported`. The served app runs in this process, so it sees the patch."""
    from environments.echo import EchoEnvironment

    monkeypatch.setattr(EchoEnvironment, "snapshot", Environment.snapshot)
    monkeypatch.setattr(EchoEnvironment, "restore", Environment.restore)


def echo_with_step_budget(root: Path, max_steps: int) -> Path:
    """A tasks folder under `root` holding echo/say-done with a step budget of `max_steps`: for the
    tests of how a budget cuts an episode off (`truncated`). Returns the folder, for `tasks_dir`."""
    tasks = root / "tasks"
    task = tasks / "echo" / "say-done"
    shutil.copytree(Path(__file__).resolve().parents[1] / "tasks" / "echo" / "say-done", task)
    config = task / "task.yaml"
    limits = "limits: {step_timeout_s: 5, verify_timeout_s: 30}"
    assert limits in config.read_text(), "echo/say-done's limits changed: update this helper"
    config.write_text(config.read_text().replace(limits, limits[:-1] + f", max_steps: {max_steps}}}"))
    return tasks


@pytest.fixture
def tasks_root() -> Path:
    return Path(__file__).resolve().parents[1] / "tasks"
