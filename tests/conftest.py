"""Shared fixtures: a real hub in-process, and a real server on a free port."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import uvicorn
from hypothesis import settings as hypothesis_settings

from envhub.config import Settings, get_settings
from envhub.server.app import create_app
from envhub.server.hub import Hub
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
    (`envhub` commands, served pages) inherit it through `ENVHUB_DATA_DIR`."""
    shared = get_settings().data_dir
    runtime.install(shared)  # no-op when installed and current
    root = Path(tempfile.mkdtemp(prefix="envhub-tests-", dir="/var/tmp"))  # sandbox uids must reach it
    root.chmod(0o755)
    (root / "verifier").mkdir(mode=0o755)
    os.symlink(runtime.site_dir(shared).resolve(), runtime.site_dir(root))
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


@pytest.fixture
async def hub() -> AsyncIterator[Hub]:
    """An in-process hub serving echo and terminal (what the server does underneath)."""
    h = Hub.build(make_settings(families=["echo", "terminal"]))
    await h.start()
    try:
        yield h
    finally:
        await h.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    def __init__(self, settings: Settings) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.app = create_app(settings)
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    ws_max_size=settings.max_body_bytes, ws_per_message_deflate=False,
                                                    ws="websockets-sansio"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)

    @property
    def hub(self) -> Hub:
        return self.app.state.hub


@pytest.fixture(scope="session")
def live_server() -> Iterator[LiveServer]:
    """A real uvicorn server (echo + terminal) shared by the protocol tests."""
    with LiveServer(make_settings(families=["echo", "terminal"])) as server:
        yield server


@pytest.fixture
def tasks_root() -> Path:
    return Path(__file__).resolve().parents[1] / "tasks"
