"""Fixtures for the db family: stores and session databases on SQLite and (when
ENVHUB_TEST_POSTGRES_URL is set) PostgreSQL, and an in-process hub serving `db`."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from envhub.config import Settings, get_settings
from envhub.core.hub import Hub
from envhub.spec import ToolCall
from envhub.verify import runtime
from environments.db import domains as registry
from environments.db.calls import run_call
from environments.db.store import Handle, PgStore, SqliteStore, Store
from tests.conftest import make_settings, running_hub

PG_URL = os.environ.get("ENVHUB_TEST_POSTGRES_URL")
NO_PG = "ENVHUB_TEST_POSTGRES_URL is not set (start PostgreSQL and export its URL to run these)"

ENGINES = ["sqlite", pytest.param("postgres", marks=[pytest.mark.postgres,
                                                      pytest.mark.skipif(not PG_URL, reason=NO_PG)])]


@pytest.fixture(scope="session")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> SqliteStore:
    return SqliteStore(tmp_path_factory.mktemp("db-data"))


@pytest.fixture(scope="session")
def pg_store() -> Iterator[PgStore]:
    if not PG_URL:
        pytest.skip(NO_PG)
    store = PgStore(PG_URL)
    yield store
    store.close()


@pytest.fixture(params=ENGINES)
def store(request: pytest.FixtureRequest) -> Store:
    return request.getfixturevalue("sqlite_store" if request.param == "sqlite" else "pg_store")


@pytest.fixture
def open_db(store: Store, tmp_path: Path) -> Iterator[Callable[[str], Handle]]:
    """Open fresh session databases of a domain; all are dropped after the test."""
    handles: list[Handle] = []

    def make(domain: str) -> Handle:
        h = store.create(registry.get(domain), tmp_path)
        handles.append(h)
        return h

    yield make
    for h in handles:
        h.drop()


def call(handle: Handle, domain: str, tool: str, **arguments: object) -> object:
    return run_call(handle, registry.get(domain), ToolCall(tool=tool, arguments=arguments))


@pytest.fixture(scope="session")
def private_data_dir() -> Iterator[Path]:
    """A data dir of our own that shares the installed verifier site: other servers re-sync the
    shared verifier lib at start, which would race with our verifier runs."""
    shared = get_settings().data_dir
    site = runtime.site_dir(shared)
    if not (site / ".envhub-stamp").is_file():
        pytest.skip("the verifier runtime is not installed: run `envhub setup`")
    path = Path(tempfile.mkdtemp(prefix="db-tests-", dir=shared.parent))
    path.chmod(0o755)
    (path / "verifier").mkdir()
    (path / "verifier" / "site").symlink_to(site)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def hub_settings(data_dir: Path, url: str | None) -> Settings:
    return make_settings(families=["db"], db_family_url=url, data_dir=data_dir)


@pytest.fixture(params=ENGINES)
async def db_hub(request: pytest.FixtureRequest, private_data_dir: Path) -> AsyncIterator[Hub]:
    """An in-process hub serving the db family on the given engine."""
    url = PG_URL if request.param == "postgres" else None
    async with running_hub(hub_settings(private_data_dir, url)) as hub:
        yield hub
