"""Per-session databases: SQLite file copies by default, PostgreSQL databases when given a URL.

Each domain's starting database is built once per seed, deterministically, from the domain's seed
function (a *template*): a SQLite file under `<data_dir>/db-templates/`, or a PostgreSQL database
named after the domain, a fingerprint of the code that built it and the seed. Hand-written tasks
use the one catalogue seed (`domains.SEED`); a drawn task names its own (`metadata.db_seed`), so
its answers come from a database no other task shares. A session gets its own
copy (a file copy, or `CREATE DATABASE ... TEMPLATE`) and drops it when it closes, so
concurrent sessions never see each other's rows.

A database that vanished or a connection that dropped mid-episode is an `EnvError`: the agent,
which only calls typed tools, cannot have caused it.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import sqlite3
import threading
import uuid
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

from sqlalchemy import Engine, create_engine, exc, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from environments.db import dump as dumping
from environments.db.core import Domain
from environments.db.domains import SEED
from envhub.errors import EnvError, TaskInvalid

HERE = Path(__file__).resolve().parent
INITIAL_KEPT = 32  # starting databases whose dumps a store keeps in memory


@lru_cache(maxsize=None)
def fingerprint(domain: Domain) -> str:
    """Names the template: changes when the domain's code, the seed or Faker changes."""
    h = hashlib.sha256(f"{SEED}:{version('faker')}:".encode())
    for p in (HERE / "core.py", HERE / "domains" / f"{domain.name}.py"):
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def seed_of(metadata: dict) -> int:
    """The seed of a task's starting database: its own `db_seed`, or the catalogue's."""
    value = metadata.get("db_seed", SEED)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**62:
        raise TaskInvalid(f"metadata.db_seed must be a non-negative integer, not {value!r}")
    return value


def _suffix(seed: int) -> str:
    """How a template's name tells its seed (the catalogue seed's keeps its historical name)."""
    return "" if seed == SEED else f"-s{seed}"


def build(engine: Engine, domain: Domain, seed: int = SEED) -> None:
    """Create the domain's tables and seed rows into an empty database."""
    domain.base.metadata.create_all(engine)
    order = {t.name: i for i, t in enumerate(domain.base.metadata.sorted_tables)}
    with Session(engine) as s:
        domain.seed(s, seed)
        pending = sorted(s.new, key=lambda o: (order[o.__table__.name], o.id))
        for obj in pending:  # insert parents before children: PostgreSQL checks foreign keys per row
            s.expunge(obj)
        for _, group in itertools.groupby(pending, key=lambda o: order[o.__table__.name]):
            s.add_all(list(group))
            s.flush()
        s.commit()


class Handle(ABC):
    """One session's database."""

    engine: Engine

    @abstractmethod
    def check(self) -> None:
        """Raise `EnvError` when the database is gone."""

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose DB faults surface as `EnvError` (the caller commits)."""
        self.check()
        try:
            with Session(self.engine) as s:
                yield s
        except (exc.OperationalError, exc.InterfaceError, exc.DisconnectionError, sqlite3.OperationalError) as e:
            raise EnvError(f"the session database failed: {str(e).splitlines()[0][:300]}") from e
        except exc.DBAPIError as e:
            if e.connection_invalidated:
                raise EnvError(f"the database connection dropped: {str(e).splitlines()[0][:300]}") from e
            raise

    @abstractmethod
    def drop(self) -> None:
        """Remove the database; safe to call twice."""


class Store(ABC):
    """Where templates and session databases live."""

    engine_name: str

    @abstractmethod
    def create(self, domain: Domain, workdir: Path, tag: str = "s", seed: int = SEED) -> Handle:
        """A fresh copy of the domain's template for `seed`, for one session."""

    def initial(self, domain: Domain, seed: int = SEED) -> dumping.Tables:
        """The canonical dump of the starting database (the most recent few kept: a drawn task's
        seed is read by its session's export and its verifier's controls, then seldom again)."""
        key = (domain.name, seed)
        with self._lock:
            if key in self._initial:
                self._initial.move_to_end(key)
                return self._initial[key]
            handle = self.create(domain, Path(os.environ.get("TMPDIR", "/tmp")), tag="i", seed=seed)
            try:
                with handle.engine.connect() as conn:
                    tables = dumping.dump(conn, domain.base.metadata)
            finally:
                handle.drop()
            self._initial[key] = tables
            while len(self._initial) > INITIAL_KEPT:
                self._initial.popitem(last=False)
            return tables

    def close(self) -> None:  # noqa: B027 - optional
        """Release shared resources (connection pools)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._initial: OrderedDict[tuple[str, int], dumping.Tables] = OrderedDict()


# --- SQLite ---------------------------------------------------------------------------------------

class SqliteHandle(Handle):
    def __init__(self, path: Path) -> None:
        self.path = path

        def connect() -> sqlite3.Connection:
            con = sqlite3.connect(f"file:{path}?mode=rw", uri=True, check_same_thread=False)
            con.execute("PRAGMA foreign_keys=ON")
            con.execute("PRAGMA synchronous=OFF")
            return con

        # A new connection per use: a deleted file is noticed at the next step, never
        # silently recreated (mode=rw) nor kept alive through an open descriptor.
        self.engine = create_engine("sqlite://", creator=connect, poolclass=NullPool)

    def check(self) -> None:
        if not self.path.is_file():
            raise EnvError(f"the session database {self.path.name} is gone")

    def drop(self) -> None:
        self.engine.dispose()
        self.path.unlink(missing_ok=True)


class SqliteStore(Store):
    engine_name = "sqlite"

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.root = data_dir / "db-templates"

    def template(self, domain: Domain, seed: int = SEED) -> Path:
        path = self.root / f"{domain.name}-{fingerprint(domain)}{_suffix(seed)}.sqlite3"
        if path.is_file():
            return path
        with self._lock:
            if path.is_file():
                return path
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{uuid.uuid4().hex}.tmp")
            engine = create_engine(f"sqlite:///{tmp}", poolclass=NullPool)
            try:
                build(engine, domain, seed)
            finally:
                engine.dispose()
            os.replace(tmp, path)  # atomic: another process building the same template is harmless
        return path

    def create(self, domain: Domain, workdir: Path, tag: str = "s", seed: int = SEED) -> SqliteHandle:
        src = self.template(domain, seed)
        dest = workdir / f"{domain.name}-{tag}-{uuid.uuid4().hex[:8]}.sqlite3"
        try:
            shutil.copyfile(src, dest)
        except OSError as e:
            raise EnvError(f"could not copy the {domain.name} template: {e}") from e
        return SqliteHandle(dest)


# --- PostgreSQL -----------------------------------------------------------------------------------

class PgHandle(Handle):
    def __init__(self, store: PgStore, name: str) -> None:
        self.store = store
        self.name = name
        self.dropped = False
        # One connection per session; if it drops, the episode is an env_error (no silent reconnect
        # that could hide a lost transaction).
        self.engine = create_engine(store.url.set(database=name), pool_size=1, max_overflow=0, pool_pre_ping=False)

    def check(self) -> None:
        if self.dropped:
            raise EnvError(f"the session database {self.name} was dropped")

    def drop(self) -> None:
        if self.dropped:
            return
        self.dropped = True
        self.engine.dispose()
        self.store.drop_database(self.name)


class PgStore(Store):
    engine_name = "postgresql"

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = make_url(url)
        if not self.url.drivername.startswith("postgresql"):
            raise ValueError(f"not a PostgreSQL URL: {self.url.drivername}")
        if self.url.drivername == "postgresql":
            self.url = self.url.set(drivername="postgresql+psycopg")
        self.admin = create_engine(self.url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
        self._templates: set[str] = set()

    def _exec(self, sql: str) -> None:
        try:
            with self.admin.connect() as c:
                c.execute(text(sql))
        except (exc.OperationalError, exc.InterfaceError) as e:
            raise EnvError(f"PostgreSQL is unreachable: {str(e).splitlines()[0][:300]}") from e

    def _exists(self, name: str) -> bool:
        try:
            with self.admin.connect() as c:
                return bool(c.execute(text("select 1 from pg_database where datname = :n"), {"n": name}).first())
        except (exc.OperationalError, exc.InterfaceError) as e:
            raise EnvError(f"PostgreSQL is unreachable: {str(e).splitlines()[0][:300]}") from e

    def template(self, domain: Domain, seed: int = SEED) -> str:
        name = f"envhub_tpl_{domain.name}_{fingerprint(domain)}{_suffix(seed).replace('-', '_')}"
        if name in self._templates:
            return name
        with self._lock:
            if not self._exists(name):
                build_name = f"envhub_build_{uuid.uuid4().hex[:12]}"
                self._exec(f'CREATE DATABASE "{build_name}"')
                engine = create_engine(self.url.set(database=build_name), poolclass=NullPool)
                try:
                    build(engine, domain, seed)
                except BaseException:
                    engine.dispose()
                    self.drop_database(build_name)
                    raise
                engine.dispose()
                try:
                    self._exec(f'ALTER DATABASE "{build_name}" RENAME TO "{name}"')
                except exc.ProgrammingError:  # another server built it meanwhile
                    self.drop_database(build_name)
            self._templates.add(name)
        return name

    def create(self, domain: Domain, workdir: Path, tag: str = "s", seed: int = SEED) -> PgHandle:
        tpl = self.template(domain, seed)
        name = f"envhub_{tag}_{uuid.uuid4().hex[:16]}"
        try:
            self._exec(f'CREATE DATABASE "{name}" TEMPLATE "{tpl}"')
        except exc.DBAPIError as e:
            raise EnvError(f"could not clone the {domain.name} template: {str(e).splitlines()[0][:300]}") from e
        return PgHandle(self, name)

    def drop_database(self, name: str) -> None:
        try:
            self._exec(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except (EnvError, exc.DBAPIError):
            pass  # the server is gone; nothing left to free here

    def close(self) -> None:
        self.admin.dispose()


def make_store(data_dir: Path, url: str | None) -> Store:
    return PgStore(url) if url else SqliteStore(data_dir)
