"""The episode store on PostgreSQL: round trip, and a lost connection that loses nothing.

Uses `ENVHUB_TEST_POSTGRES_URL` when set (round trip only: the test cannot stop that server).
Otherwise it starts a throwaway cluster with Debian's initdb/pg_ctl as the `postgres` user in a
temp folder (needs root and the postgresql package), and skips with the reason when it cannot.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from envhub.store import OPERATOR

pytestmark = pytest.mark.postgres
PG_BIN = Path("/usr/lib/postgresql/15/bin")


@dataclass
class Postgres:
    url: str
    datadir: Path | None = None  # set when this test owns the server
    options: str = ""

    def ctl(self, *args: str) -> None:
        assert self.datadir is not None
        subprocess.run(["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(self.datadir),
                        "-w", "-t", "60", *args], check=True, capture_output=True)

    def start(self) -> None:
        assert self.datadir is not None
        self.ctl("-o", self.options, "-l", str(self.datadir.parent / "log"), "start")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    if url := os.environ.get("ENVHUB_TEST_POSTGRES_URL"):
        yield Postgres(url)
        return
    if os.geteuid() != 0 or not (PG_BIN / "initdb").exists() or not shutil.which("runuser"):
        pytest.skip("ENVHUB_TEST_POSTGRES_URL is unset and no throwaway cluster can be started "
                    "(needs root and Debian's postgresql-15)")
    root = Path(tempfile.mkdtemp(prefix="envhub-pg-"))
    shutil.chown(root, "postgres", "postgres")
    datadir, port = root / "data", _free_port()
    subprocess.run(["runuser", "-u", "postgres", "--", str(PG_BIN / "initdb"), "-D", str(datadir), "-A", "trust",
                    "-U", "postgres", "--no-sync"], check=True, capture_output=True)
    pg = Postgres(f"postgresql://postgres@127.0.0.1:{port}/postgres", datadir,
                  f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off")
    pg.start()
    try:
        yield pg
    finally:
        subprocess.run(["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(datadir), "-m",
                        "immediate", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


async def test_round_trip(postgres: Postgres, data_dir: Path, hub_with_store, run_episode) -> None:
    hub = hub_with_store(data_dir, postgres.url)
    await hub.start()
    try:
        assert hub.store is not None and hub.store.engine.dialect.name == "postgresql"
        sid = await run_episode(hub, ["<b>x</b>", "done"], policy="p1")
        assert await hub.store.writer.flush()
        ep = hub.store.episode(sid, viewer=OPERATOR)
        assert ep is not None and (ep.reward, ep.step_count, ep.policy_version) == (1.0, 2, "p1")
        assert ep.ended_at is not None and ep.created_at.tzinfo is not None
        assert [s.observation for s in hub.store.steps(sid, viewer=OPERATOR)[0]] == ["<b>x</b>", "done"]
        assert hub.store.latency(task_id="echo/say-done").episodes >= 1
    finally:
        await hub.stop()


async def test_lost_connection_buffers_then_flushes(postgres: Postgres, data_dir: Path, hub_with_store,
                                                    run_episode) -> None:
    if postgres.datadir is None:
        pytest.skip("needs a server this test may stop (unset ENVHUB_TEST_POSTGRES_URL to use a throwaway one)")
    hub = hub_with_store(data_dir, postgres.url)
    await hub.start()
    try:
        assert hub.store is not None
        await run_episode(hub, ["warm-up"], verify=False)
        assert await hub.store.writer.flush()
        postgres.ctl("-m", "fast", "stop")
        try:
            sid = await run_episode(hub, ["a", "b", "done"])
            await asyncio.sleep(1.0)
            assert hub.store.writer.pending > 0 and hub.store.writer.write_errors > 0
        finally:
            postgres.start()
        assert await hub.store.writer.flush(timeout_s=60)
        ep = hub.store.episode(sid, viewer=OPERATOR)
        assert ep is not None and ep.step_count == 3 and ep.reward == 1.0 and hub.store.writer.dropped == 0
    finally:
        await hub.stop()


def test_a_store_made_before_owners_gains_the_column_and_keeps_its_rows(postgres: Postgres) -> None:
    """The first migration on PostgreSQL: a store without `owner` gets the column and its index in place."""
    from sqlalchemy import inspect

    from envhub.store import EpisodeStore

    first = EpisodeStore(postgres.url)
    try:
        assert first.total() >= 0  # makes the schema
        with first.engine.begin() as conn:  # as an earlier version left it: no owner, one episode, no migrations
            conn.exec_driver_sql("ALTER TABLE episodes DROP COLUMN owner")
            conn.exec_driver_sql("DROP TABLE alembic_version")
            conn.exec_driver_sql("INSERT INTO episodes (id, env, task_id, harness, created_at, step_count, detail, "
                                 "timings) VALUES ('pg-old-1', 'echo', 'echo/say-done', 'plain', now(), 0, '', '{}')")
    finally:
        first.engine.dispose()
    store = EpisodeStore(postgres.url)
    try:
        old = store.episode("pg-old-1", viewer=OPERATOR)
        assert old is not None and old.task_id == "echo/say-done"
        inspector = inspect(store.engine)
        assert "owner" in {c["name"] for c in inspector.get_columns("episodes")}
        assert "ix_episodes_owner_created" in {i["name"] for i in inspector.get_indexes("episodes")}
    finally:
        with store.engine.begin() as conn:
            conn.exec_driver_sql("DELETE FROM episodes WHERE id = 'pg-old-1'")
        store.engine.dispose()


async def test_runs_on_postgres(postgres: Postgres, data_dir: Path, hub_with_store) -> None:
    """The runs tables on PostgreSQL: a run, its step reports (one replaced) and the figures of the
    episodes whose reset named it."""
    from envhub.core.auth import Caller
    from envhub.spec import ResetRequest, RunStepReport, StepRequest, ToolCall

    owner = Caller(owner="token:pg-runs-owner-000000000000000")
    hub = hub_with_store(data_dir, postgres.url)
    await hub.start()
    try:
        store, m = hub.store, hub.manager
        run = store.create_run(owner=owner.owner, run_id=f"pg-run-{os.getpid()}", config={"lr": 1e-5})
        for policy, message in (("1", "nope"), ("2", "done"), ("2", "done")):
            c = await m.create(ResetRequest(env="echo", task_id="echo/say-done", policy_version=policy,
                                            run_id=run.id), owner)
            await m.step(c.session_id, StepRequest(action=ToolCall(tool="echo", arguments={"message": message})),
                         owner)
            await m.verify(c.session_id, owner, keep_state=True)
            assert not (await m.reverify(c.session_id, owner)).flipped  # its second verdict: a json column
            await m.close(c.session_id, owner)
        assert await store.writer.flush()
        for step, figures in ((1, {"loss": 9.0}), (1, {"loss": 0.5, "cpu_s": 3.0, "staleness": {"0": 4.0}}),
                              (2, {"loss": float("nan"), "kl": float("inf")})):  # PostgreSQL's json has no NaN
            store.report_step(run.id, RunStepReport(step=step, policy_version="2", figures=figures),
                              viewer=owner.viewer)
        detail = store.run_detail(run.id, viewer=owner.viewer)
        assert detail is not None and [s.figures for s in detail.step_reports] == [
            {"loss": 0.5, "cpu_s": 3.0, "staleness": {"0": 4.0}}, {"loss": None, "kl": None}]
        f = detail.figures
        assert f.episodes == 3 and [(r.policy_version, r.n, r.mean) for r in f.reward_by_policy] == [
            ("1", 1, 0.0), ("2", 2, 1.0)]
        assert f.cpu_s_per_success == 1.5 and f.anti_hack_rate == 0.0
        assert f.verifier_disagreement is not None and (f.verifier_disagreement.sampled,
                                                        f.verifier_disagreement.flipped) == (3, 0)
        assert store.run_detail(run.id, viewer=OPERATOR) is not None
        assert [r.id for r in store.runs(viewer=owner.viewer)[0]] == [run.id]
    finally:
        await hub.stop()


def test_a_store_made_before_runs_gains_the_run_column(postgres: Postgres) -> None:
    """The first migration on PostgreSQL: a store without `episodes.run_id` gets it and its index in place."""
    from sqlalchemy import inspect

    from envhub.store import EpisodeStore

    first = EpisodeStore(postgres.url)
    try:
        assert first.total() >= 0  # makes the schema
        with first.engine.begin() as conn:  # as an earlier version left it: no run_id, one episode, no migrations
            conn.exec_driver_sql("ALTER TABLE episodes DROP COLUMN run_id")
            conn.exec_driver_sql("DROP TABLE alembic_version")
            conn.exec_driver_sql("INSERT INTO episodes (id, env, task_id, harness, created_at, step_count, detail, "
                                 "timings) VALUES ('pg-old-2', 'echo', 'echo/say-done', 'plain', now(), 0, '', '{}')")
    finally:
        first.engine.dispose()
    store = EpisodeStore(postgres.url)
    try:
        old = store.episode("pg-old-2", viewer=OPERATOR)
        assert old is not None and old.run_id is None
        inspector = inspect(store.engine)
        assert "run_id" in {c["name"] for c in inspector.get_columns("episodes")}
        assert "ix_episodes_run_created" in {i["name"] for i in inspector.get_indexes("episodes")}
    finally:
        with store.engine.begin() as conn:
            conn.exec_driver_sql("DELETE FROM episodes WHERE id = 'pg-old-2'")
        store.engine.dispose()
