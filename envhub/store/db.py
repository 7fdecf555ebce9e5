"""Engines for the episode store: SQLite (default, WAL) or PostgreSQL (psycopg 3)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from envhub.store.models import ADDED_COLUMNS, ADDED_INDEXES, OBSOLETE_INDEXES, Base

log = logging.getLogger("envhub.store")


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


def create_schema(engine: Engine) -> None:
    """Create the missing tables. Idempotent and safe to race: the store's writer thread and a reader
    (or another replica on the same database) may all meet a fresh database at once."""
    with _schema_lock:
        try:
            Base.metadata.create_all(engine)
        except DBAPIError:
            # Another process created a table between create_all's check and its CREATE: check again.
            Base.metadata.create_all(engine)
        add_missing_columns(engine)
        try:  # a store an earlier version made: drop what it no longer needs
            with engine.begin() as conn:
                for name in OBSOLETE_INDEXES:
                    conn.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")
        except DBAPIError as exc:  # e.g. a role without the right: the store works as it is, only slower
            log.warning("episode store: could not drop the obsolete indexes %s: %s", ", ".join(OBSOLETE_INDEXES),
                        str(exc).splitlines()[0][:200])


def add_missing_columns(engine: Engine) -> None:
    """The one schema step an existing store needs (until migrations come): `ALTER TABLE ... ADD
    COLUMN` for each of `ADDED_COLUMNS` it lacks, then their indexes. Nullable columns only, so no
    row is rewritten or lost; SQLite and PostgreSQL both add such a column in place. Safe to race:
    a column another process added meanwhile is found on the second look."""
    for attempt in (1, 2):
        present = {t: {c["name"] for c in inspect(engine).get_columns(t)} for t in {t for t, _, _ in ADDED_COLUMNS}}
        missing = [(t, c, sql) for t, c, sql in ADDED_COLUMNS if c not in present[t]]
        if not missing:
            break
        try:
            with engine.begin() as conn:
                for table, column, sql_type in missing:
                    conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {column} {sql_type}")
                    log.warning("episode store: added the column %s.%s (earlier rows have none)", table, column)
        except DBAPIError:
            if attempt == 2:
                raise
    indexes = {i.name: i for t in Base.metadata.sorted_tables for i in t.indexes}
    try:
        with engine.begin() as conn:
            for name in ADDED_INDEXES:
                indexes[name].create(conn, checkfirst=True)
    except DBAPIError as exc:  # made by another process meanwhile, or a role without the right: reads work
        log.warning("episode store: could not create the indexes %s: %s", ", ".join(ADDED_INDEXES),
                    str(exc).splitlines()[0][:200])
