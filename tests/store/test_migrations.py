"""The store's schema comes from Alembic migrations (`envhub/store/migrations`), run at the store's
first use (`create_schema`): the head revision makes what the models declare, and a store an earlier
envhub made (no `alembic_version`) upgrades to it with its rows, on SQLite and on PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect

from envhub.config import REPO_ROOT
from envhub.store import OPERATOR, EpisodeStore
from envhub.store.db import _alembic, create_schema, head, make_engine, revision
from envhub.store.models import Base
from tests.store.test_postgres import Postgres, postgres  # noqa: F401 - the throwaway cluster, reused

#: The single-column indexes the earliest stores made (the composite ones replaced them).
OBSOLETE = {"ix_episodes_env", "ix_episodes_task_id"}


def differences(engine: Engine) -> list:
    """What the database's schema lacks or has beyond the models' (Alembic's autogenerate comparison)."""
    with engine.connect() as conn:
        return compare_metadata(MigrationContext.configure(conn), Base.metadata)


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    return tmp_path / "store.sqlite3"


def test_the_head_revision_makes_what_the_models_declare(sqlite_path: Path) -> None:
    """Fails while a model changes without a revision that makes the change."""
    engine = make_engine(f"sqlite:///{sqlite_path}")
    try:
        create_schema(engine)
        assert revision(engine) == head() == "0003"
        assert differences(engine) == []
    finally:
        engine.dispose()


def make_earliest_store(engine: Engine) -> None:
    """A store as the earliest envhub left it: no `owner`, `run_id`, `reverify` or fork column, no runs
    tables, the single-column indexes the composite ones replaced, no `alembic_version`; and one episode."""
    Base.metadata.create_all(engine)
    with engine.begin() as conn:
        for sql in ("DROP TABLE run_steps", "DROP TABLE runs", "DROP INDEX ix_episodes_owner_created",
                    "DROP INDEX ix_episodes_run_created", "ALTER TABLE episodes DROP COLUMN owner",
                    "ALTER TABLE episodes DROP COLUMN run_id", "ALTER TABLE episodes DROP COLUMN reverify",
                    "ALTER TABLE episodes DROP COLUMN parent_id", "ALTER TABLE episodes DROP COLUMN forked_at_step",
                    "CREATE INDEX ix_episodes_env ON episodes (env)",
                    "CREATE INDEX ix_episodes_task_id ON episodes (task_id)"):
            conn.exec_driver_sql(sql)
        conn.exec_driver_sql("INSERT INTO episodes (id, env, task_id, harness, policy_version, created_at, "
                             "step_count, reward, detail, timings) VALUES ('old-1', 'echo', 'echo/say-done', "
                             "'plain', 'p0', '2026-01-02 03:04:05', 1, 1.0, '', '{}')")


def test_a_store_made_before_migrations_upgrades_and_keeps_its_rows(sqlite_path: Path) -> None:
    engine = make_engine(f"sqlite:///{sqlite_path}")
    make_earliest_store(engine)
    engine.dispose()
    store = EpisodeStore(f"sqlite:///{sqlite_path}")
    try:
        old = store.episode("old-1", viewer=OPERATOR)  # the first read upgrades
        assert old is not None and (old.policy_version, old.reward, old.run_id) == ("p0", 1.0, None)
        assert revision(store.engine) == head() and differences(store.engine) == []
        assert not OBSOLETE & {i["name"] for i in inspect(store.engine).get_indexes("episodes")}
        assert store.create_run(owner=None, run_id="after-upgrade").id == "after-upgrade"
    finally:
        store.engine.dispose()


def test_a_store_the_last_version_made_is_taken_as_it_is(sqlite_path: Path) -> None:
    """A store made by `create_all` (before migrations) already has today's schema: it is only stamped."""
    engine = make_engine(f"sqlite:///{sqlite_path}")
    Base.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO runs (id, created_at, config) VALUES ('r1', '2026-01-02 03:04:05', '{}')")
    assert revision(engine) is None
    create_schema(engine)
    assert revision(engine) == head() and differences(engine) == []
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT id FROM runs").all() == [("r1",)]
    engine.dispose()


def test_a_store_at_revision_0001_gains_the_reverify_column_and_keeps_its_rows(sqlite_path: Path) -> None:
    """0002 adds `episodes.reverify` in place: a store that stood at 0001 comes to the head with its episodes."""
    engine = make_engine(f"sqlite:///{sqlite_path}")
    with engine.begin() as conn:
        command.upgrade(_alembic(conn), "0001")
        conn.exec_driver_sql("INSERT INTO episodes (id, env, task_id, harness, policy_version, created_at, "
                             "step_count, reward, detail, timings) VALUES ('at-1', 'echo', 'echo/say-done', "
                             "'plain', 'p0', '2026-01-02 03:04:05', 1, 1.0, '', '{}')")
    assert revision(engine) == "0001"
    assert "reverify" not in {c["name"] for c in inspect(engine).get_columns("episodes")}
    create_schema(engine)
    assert revision(engine) == head() == "0003" and differences(engine) == []
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT id, reward, reverify FROM episodes").all() == [("at-1", 1.0, None)]
    engine.dispose()


def test_a_store_at_revision_0002_gains_the_fork_columns_and_keeps_its_rows(sqlite_path: Path) -> None:
    """0003 adds `episodes.parent_id` and `forked_at_step` in place."""
    engine = make_engine(f"sqlite:///{sqlite_path}")
    with engine.begin() as conn:
        command.upgrade(_alembic(conn), "0002")
        conn.exec_driver_sql("INSERT INTO episodes (id, env, task_id, harness, policy_version, created_at, "
                             "step_count, reward, detail, timings) VALUES ('at-2', 'echo', 'echo/say-done', "
                             "'plain', 'p0', '2026-01-02 03:04:05', 1, 1.0, '', '{}')")
    assert "parent_id" not in {c["name"] for c in inspect(engine).get_columns("episodes")}
    create_schema(engine)
    assert revision(engine) == head() == "0003" and differences(engine) == []
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT id, parent_id, forked_at_step FROM episodes").all() == [("at-2", None, None)]
    engine.dispose()


RACE = r"""
import sys
from envhub.store.db import create_schema, make_engine, revision
engine = make_engine(f"sqlite:///{sys.argv[1]}")
create_schema(engine)
print(revision(engine))
"""


def test_processes_that_meet_a_fresh_store_at_once_all_come_up(sqlite_path: Path) -> None:
    """Replicas (or a server and `envhub episodes`) may start on the same new store together."""
    racers = [subprocess.Popen([sys.executable, "-c", RACE, str(sqlite_path)], cwd=REPO_ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outcomes = [r.communicate(timeout=120) for r in racers]
    assert [r.returncode for r in racers] == [0] * 4, [err[-2000:] for _, err in outcomes]
    assert {out.strip() for out, _ in outcomes} == {head()}


@pytest.mark.postgres
def test_a_store_made_before_migrations_upgrades_on_postgres(postgres: Postgres) -> None:  # noqa: F811
    engine = make_engine(postgres.url)
    try:
        with engine.begin() as conn:  # start from nothing: another test module may have made the store
            conn.exec_driver_sql("DROP TABLE IF EXISTS alembic_version, run_steps, runs, episode_steps, "
                                 "episode_checks, episodes CASCADE")
        make_earliest_store(engine)
        create_schema(engine)
        assert revision(engine) == head() and differences(engine) == []
        assert not OBSOLETE & {i["name"] for i in inspect(engine).get_indexes("episodes")}
        with engine.begin() as conn:
            assert conn.exec_driver_sql("SELECT id, owner, run_id, reward FROM episodes").all() == [
                ("old-1", None, None, 1.0)]
            conn.exec_driver_sql("DELETE FROM episodes WHERE id = 'old-1'")
    finally:
        engine.dispose()
