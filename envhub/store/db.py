"""Engines for the episode store: SQLite (default, WAL) or PostgreSQL (psycopg 3), and its schema
(Alembic migrations: `envhub/store/migrations`)."""

from __future__ import annotations

import functools
import threading
import time
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from envhub.store import migrations


def normalise_url(url: str) -> str:
    """`postgresql://` means psycopg 3 here (SQLAlchemy would pick psycopg2, which is not installed)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def make_engine(url: str, *, busy_timeout_ms: int = 5000) -> Engine:
    """An engine that survives restarts of the database (pre-ping) and concurrent SQLite writers."""
    url = normalise_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": busy_timeout_ms / 1000})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            # In WAL mode NORMAL is still crash-safe (no corruption); only a power cut can lose the
            # last commits. FULL fsyncs every batch, a cost the writer pays on the server's CPU.
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5,
                         connect_args={"connect_timeout": 5})


_schema_lock = threading.Lock()
#: SQLite runs a revision's DDL outside one transaction, so racing processes can each make a table
#: or an index and all but one fail; each looks again (the revisions make only what is missing).
#: Two attempts were not enough for four racers (1 failure in 10 runs of the race test).
UPGRADE_ATTEMPTS = 5
#: The PostgreSQL advisory lock one upgrade holds, so replicas starting together upgrade one by one.
_UPGRADE_LOCK = 0x656E76687562  # "envhub"


def _alembic(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations.LOCATION))
    if connection is not None:
        config.attributes["connection"] = connection  # envhub/store/migrations/env.py runs on it
    return config


@functools.cache
def head() -> str | None:
    """The newest revision of the store's schema (`envhub/store/migrations/versions`)."""
    return ScriptDirectory.from_config(_alembic()).get_current_head()


def revision(engine: Engine) -> str | None:
    """The revision the store's schema is at (None: a store made before migrations, or none yet)."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def create_schema(engine: Engine) -> None:
    """Bring the store's schema to the head revision: `alembic upgrade head`, on SQLite and
    PostgreSQL alike. A fresh database gets every table; a store an earlier envhub made (no
    `alembic_version`) gets what it lacks, its rows kept (revision 0001 says how); a store at the
    head costs one read. Safe to race: the store's writer thread and a reader (or another replica on
    the same database) may all meet a fresh database at once: PostgreSQL's upgrades queue on an
    advisory lock, and one that lost a race on SQLite looks again."""
    with _schema_lock:
        for attempt in range(1, UPGRADE_ATTEMPTS + 1):
            try:
                _upgrade(engine)
                return
            except DBAPIError:
                if attempt == UPGRADE_ATTEMPTS:
                    raise
                time.sleep(0.05 * attempt)  # let the racer that won finish its revision


def _upgrade(engine: Engine) -> None:
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_UPGRADE_LOCK})")
        if MigrationContext.configure(conn).get_current_revision() == head():
            return
        command.upgrade(_alembic(conn), "head")
