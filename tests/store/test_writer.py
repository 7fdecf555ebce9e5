"""The episode store records real sessions, and loses nothing while the database is unavailable."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from prometheus_client import REGISTRY

from envhub.config import REPO_ROOT, Settings
from envhub.store import OPERATOR
from tests.conftest import running_hub
from tests.store.conftest import echo_settings


def metric(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


@contextmanager
def locked(db: Path) -> Iterator[None]:
    """Hold SQLite's write lock from another connection, as a stuck writer or a full disk would."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


async def test_round_trip_through_the_hub(data_dir: Path, run_episode) -> None:
    async with running_hub(Settings(data_dir=data_dir, tasks_dir=REPO_ROOT / "tasks", families=["echo"])) as hub:
        assert hub.store is not None and hub.store.writer in hub.manager.observers
        sid = await run_episode(hub, ["hello", "done"], policy="policy-7")
        assert await hub.store.writer.flush()
        ep = hub.store.episode(sid, viewer=OPERATOR)
        assert ep is not None
        assert (ep.env, ep.task_id, ep.harness, ep.policy_version) == ("echo", "echo/say-done", "plain", "policy-7")
        assert (ep.reward, ep.passed, ep.failure_class, ep.step_count) == (1.0, True, "ok", 2)
        assert ep.ended_at is not None and ep.reset_s is not None and ep.verify_s is not None
        assert [(c.id, c.passed) for c in ep.checks] == [("said-done", True)]
        steps, total = hub.store.steps(sid, viewer=OPERATOR)
        assert total == 2 and [s.observation for s in steps] == ["hello", "done"]
        assert steps[0].arguments == {"message": "hello"} and steps[0].tool == "echo"
        lat = hub.store.latency(task_id="echo/say-done")
        assert lat.episodes == 1 and {f.op: f.n for f in lat.figures} == {"reset": 1, "step": 2, "verify": 1}


async def test_long_observations_are_bounded(data_dir: Path, hub_with_store, run_episode) -> None:
    hub = hub_with_store(data_dir)
    await hub.start()
    try:
        sid = await run_episode(hub, ["x" * 50_000], verify=False)
        assert await hub.store.writer.flush()
        (step,), _ = hub.store.steps(sid, viewer=OPERATOR)
        assert len(step.observation) == 4000 and step.observation_cut
        assert step.arguments_cut and isinstance(step.arguments, str) and len(step.arguments) == 8000
    finally:
        await hub.stop()


async def test_locked_database_buffers_without_blocking_steps_then_flushes(data_dir: Path, hub_with_store, run_episode) -> None:
    hub = hub_with_store(data_dir, busy_timeout_ms=200)
    await hub.start()
    store = hub.store
    assert store is not None
    db = echo_settings(data_dir).store_path
    try:
        await run_episode(hub, ["warm-up"], verify=False)  # creates the file and the schema
        assert await store.writer.flush()
        errors_before = metric("envhub_store_write_errors_total")
        with locked(db):
            started = time.monotonic()
            sid = await run_episode(hub, [f"m{i}" for i in range(20)] + ["done"])
            await asyncio.sleep(1.0)  # several write attempts fail meanwhile
            assert store.writer.pending > 0, "events should wait in the buffer while the database is locked"
            assert metric("envhub_store_write_errors_total") > errors_before
            assert metric("envhub_store_pending") == store.writer.pending
            assert store.episode(sid, viewer=OPERATOR) is None  # readers work (WAL); the episode is not there yet
            assert time.monotonic() - started < 5.0  # verify ran; no step waited on the database
        assert await store.writer.flush(timeout_s=30)
        ep = store.episode(sid, viewer=OPERATOR)
        assert ep is not None and ep.step_count == 21 and ep.reward == 1.0 and ep.ended_at is not None
        assert store.steps(sid, viewer=OPERATOR)[1] == 21
        assert store.writer.dropped == 0
    finally:
        await hub.stop()


async def test_buffer_overflow_is_counted(data_dir: Path, hub_with_store, run_episode) -> None:
    hub = hub_with_store(data_dir, busy_timeout_ms=100, capacity=10)
    await hub.start()
    store = hub.store
    assert store is not None
    try:
        await run_episode(hub, ["warm-up"], verify=False)
        assert await store.writer.flush()
        dropped_before = metric("envhub_store_dropped_total")
        with locked(echo_settings(data_dir).store_path):
            await run_episode(hub, [f"m{i}" for i in range(40)], verify=False)
            assert store.writer.dropped > 0
            assert metric("envhub_store_dropped_total") - dropped_before == store.writer.dropped
            assert store.writer.pending <= 10 + store.writer.batch_size
        assert await store.writer.flush(timeout_s=30)
    finally:
        await hub.stop()


async def test_unwritable_database_at_shutdown_spills_and_replays(data_dir: Path, hub_with_store, run_episode) -> None:
    hub = hub_with_store(data_dir, busy_timeout_ms=100, drain_timeout_s=1.0)
    await hub.start()
    await run_episode(hub, ["warm-up"], verify=False)
    assert hub.store is not None and await hub.store.writer.flush()
    with locked(echo_settings(data_dir).store_path):
        sid = await run_episode(hub, ["a", "b", "done"])
        await hub.stop()  # the database never came back: events go to a spill file
    spilled = list((data_dir / "store-spill").glob("spill-*.jsonl"))
    assert len(spilled) == 1 and spilled[0].stat().st_size > 0

    hub2 = hub_with_store(data_dir)
    await hub2.start()
    try:
        assert hub2.store is not None and await hub2.store.writer.flush()
        ep = hub2.store.episode(sid, viewer=OPERATOR)
        assert ep is not None and ep.step_count == 3 and ep.reward == 1.0
        assert hub2.store.steps(sid, viewer=OPERATOR)[1] == 3
        assert not list((data_dir / "store-spill").glob("spill-*.jsonl"))
    finally:
        await hub2.stop()


async def test_an_unwritable_event_is_dropped_alone(data_dir: Path, hub_with_store, run_episode) -> None:
    hub = hub_with_store(data_dir)
    await hub.start()
    store = hub.store
    assert store is not None
    try:
        bad = {"kind": "closed", "episode": {"id": "bad", "env": "echo", "task_id": "echo/say-done",
                                             "created_at": "not a timestamp"}, "at": "nor this", "step_count": 0}
        store.writer.put(bad)
        sid = await run_episode(hub, ["done"])
        assert await store.writer.flush()
        assert store.writer.dropped == 1
        assert store.episode("bad", viewer=OPERATOR) is None
        assert store.episode(sid, viewer=OPERATOR) is not None
    finally:
        await hub.stop()


async def test_results_are_kept_per_harness(data_dir: Path) -> None:
    """The store records each episode's skin; the registry shows rewards and classes per skin."""
    from envhub.server.routes.registry import get_task
    from envhub.spec import ResetRequest, StepRequest, ToolCall
    from envhub.web.views import task_page

    async with running_hub(Settings(data_dir=data_dir, tasks_dir=REPO_ROOT / "tasks", families=["echo"])) as hub:
        m = hub.manager
        for harness, message in (("plain", "done"), ("plain", "done"), ("mcp", "nope")):
            c = await m.create(ResetRequest(env="echo", task_id="echo/say-done", harness=harness))
            await m.step(c.session_id, StepRequest(action=ToolCall(tool="echo", arguments={"message": message})))
            await m.verify(c.session_id)
            await m.close(c.session_id)
        assert await hub.store.writer.flush()
        info = await get_task("echo/say-done", hub)
        assert {h: (s.episodes, s.mean_reward) for h, s in info.by_harness.items()} == {"plain": (2, 1.0),
                                                                                      "mcp": (1, 0.0)}
        assert info.by_harness["mcp"].failure_classes == {"ok": 1}
        assert task_page(hub.registry, "echo/say-done", OPERATOR)["by_harness"]["plain"]["mean_reward"] == 1.0


def _header(eid: str):
    from envhub.episode import EpisodeHeader

    return EpisodeHeader(id=eid, env="echo", task_id="echo/say-done", harness="plain", policy_version=None,
                         created_at=datetime(2026, 12, 1, 6, 0, tzinfo=UTC))


def _entry(i: int, text: str):
    from envhub.episode import StepEntry
    from envhub.errors import FailureClass
    from envhub.spec import Observation, ToolCall

    return StepEntry.record(i, ToolCall(tool="echo", arguments={"message": text}), Observation(text=text),
                            FailureClass.ok, 0.001)


def test_an_episode_row_is_the_same_however_its_events_are_batched(tmp_path: Path) -> None:
    """A batch folds an episode born in it into one insert; split across batches, or a batch retried
    after it committed, the row comes out the same."""
    from envhub.store import events as ev
    from envhub.store.db import create_schema, make_engine
    from envhub.store.repo import write_events

    def episode(eid: str) -> list[dict]:
        h = _header(eid)
        steps = [{"kind": "step", "episode": h, "entry": _entry(i, "m")} for i in (1, 2, 3)]
        return ev.storable([{"kind": "created", "episode": h, "reset_s": 0.25}, *steps,
                            {"kind": "closed", "episode": h, "at": "2026-12-01T06:01:00+00:00", "step_count": 3}])

    engine = make_engine(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    create_schema(engine)
    splits = {"one": [slice(0, 5)], "each": [slice(i, i + 1) for i in range(5)], "halves": [slice(0, 2), slice(2, 5)],
              "retried": [slice(0, 5), slice(0, 5)], "late close": [slice(0, 4), slice(4, 5)],
              "still open": [slice(0, 2), slice(2, 4)]}  # late steps raise the count; no close to do it
    for name, parts in splits.items():
        events = episode(name)
        for part in parts:
            with engine.begin() as conn:
                write_events(conn, events=events[part])
    with engine.connect() as conn:
        rows = {r.id: r for r in conn.exec_driver_sql(
            "SELECT id, step_count, reset_s, ended_at FROM episodes").fetchall()}
        steps = dict(conn.exec_driver_sql(
            "SELECT episode_id, count(*) FROM episode_steps GROUP BY episode_id").fetchall())
    assert set(rows) == set(splits)
    for name in splits:
        assert (rows[name].step_count, rows[name].reset_s, steps[name]) == (3, 0.25, 3), name
        ended = rows[name].ended_at
        assert ended is None if name == "still open" else str(ended).startswith("2026-12-01 06:01:00"), (name, ended)


def test_a_lone_surrogate_or_nul_is_stored_escaped_and_plain_text_as_is() -> None:
    """Escaped where the store writes (`storable`: a batch decided at once, each event when one
    needs it) and where a spill file keeps events (`plain`)."""
    from envhub.store import events as ev

    def step(text: str) -> dict:
        return {"kind": "step", "episode": _header("e"), "entry": _entry(1, text)}

    bad, good = ev.storable([step("a\ud800b\x00c"), step("plain é ✓")])
    spilled = ev.plain(step("a\ud800b\x00c"))["entry"]
    for stored in (bad, spilled):
        assert stored["observation"] == "a\\ud800b\\x00c"
        assert "\\ud800" in stored["arguments"] and "\x00" not in stored["arguments"]
        stored["observation"].encode("utf-8")  # storable anywhere
    assert good["observation"] == "plain é ✓" and "é ✓" in good["arguments"]


def test_creating_the_schema_survives_another_process_creating_it_first(tmp_path: Path) -> None:
    """Readers, the writer thread and other replicas all create the schema lazily on a fresh database:
    when another one creates a table between the check and the CREATE, it is no error."""
    import sqlite3

    from sqlalchemy import event, inspect

    from envhub.store.db import create_schema, make_engine

    path = tmp_path / "store.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    raced: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def _other_process_wins(conn, cursor, statement: str, *_: object) -> None:
        if statement.lstrip().startswith("CREATE TABLE episodes") and not raced:
            raced.append(statement)
            with sqlite3.connect(path) as other:  # the other process, a moment earlier
                other.execute(statement)

    create_schema(engine)
    assert raced, "the race was never staged"
    assert {"episodes", "episode_steps"} <= set(inspect(engine).get_table_names())


async def test_a_steady_stream_is_written_in_few_batches(tmp_path: Path) -> None:
    """Events that keep arriving are gathered for `linger_s` before each write, not written a few at a
    time as soon as the previous write returns: each batch is a commit and a hand-over to a thread,
    and many small ones cost the server's CPU several times what the rows do."""
    from envhub.store import events as ev
    from envhub.store.db import make_engine
    from envhub.store.writer import EpisodeWriter

    class BusyMachine(EpisodeWriter):
        def _write(self, batch: list) -> None:
            time.sleep(0.02)  # a commit as slow as on a loaded machine: events arrive meanwhile
            super()._write(batch)

    writer = BusyMachine(make_engine(f"sqlite:///{tmp_path / 'store.sqlite3'}"), linger_s=0.2)
    await writer.start()
    try:
        started = time.monotonic()
        sent = 0
        while time.monotonic() - started < 0.6:  # ~300 events over 0.6 s, one every 2 ms
            header = _header(f"e{sent}")
            writer.put(ev.plain({"kind": "created", "episode": header, "reset_s": 0.001}))
            sent += 1
            await asyncio.sleep(0.002)
        assert await writer.flush()
    finally:
        await writer.stop()
    assert writer.written == sent
    assert writer.batches <= 8, f"{sent} events in {writer.batches} batches"


def test_the_writer_stores_values_as_the_orm_does(tmp_path: Path) -> None:
    """The hot writes bypass SQLAlchemy's types (`repo._Bulk`): an episode written through them and one
    written through the ORM must hold the same stored text, and read back as the same values."""
    from sqlalchemy.orm import Session

    from envhub.store import events as ev
    from envhub.store.db import create_schema, make_engine
    from envhub.store.models import EpisodeRow
    from envhub.store.repo import get_episode, write_events

    engine = make_engine(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    create_schema(engine)
    at = datetime(2026, 12, 1, 6, 1, 2, 345678, tzinfo=UTC)
    with Session(engine) as s, s.begin():
        s.add(EpisodeRow(id="orm", env="echo", task_id="echo/say-done", harness="plain",
                         created_at=datetime(2026, 12, 1, 6, 0, tzinfo=UTC), ended_at=at, step_count=1,
                         detail="", timings={}, reset_s=0.25))
    h = _header("raw")
    with engine.begin() as conn:
        write_events(conn, events=ev.storable([
            {"kind": "created", "episode": h, "reset_s": 0.25},
            {"kind": "step", "episode": h, "entry": _entry(1, "m")},
            {"kind": "closed", "episode": h, "at": at, "step_count": 1}]))
    stored = "SELECT created_at, ended_at, step_count, detail, timings, reset_s FROM episodes WHERE id = ?"
    with sqlite3.connect(tmp_path / "store.sqlite3") as db:
        assert db.execute(stored, ("raw",)).fetchone() == db.execute(stored, ("orm",)).fetchone()
    with Session(engine) as s:
        raw = get_episode(s, episode_id="raw")
        assert raw is not None and (raw.ended_at, raw.timings, raw.step_count) == (at.replace(tzinfo=None), {}, 1)


def test_a_large_batch_is_written_whole_in_chunks_of_every_size(tmp_path: Path) -> None:
    """Rows go in as statements of a few fixed sizes (`repo._Insert.SIZES`): a count that needs every
    size, and one row more than they make up at once, all arrive, once each."""
    from envhub.store import events as ev
    from envhub.store.db import create_schema, make_engine
    from envhub.store.repo import _Insert, write_events

    n = sum(_Insert.SIZES) * 2 + 1  # every size twice, then one more single row
    events = []
    for i in range(n):
        h = _header(f"e{i:04d}")
        events += [{"kind": "created", "episode": h, "reset_s": 0.1}, {"kind": "step", "episode": h, "entry": _entry(1, "m")}]
    engine = make_engine(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    create_schema(engine)
    with engine.begin() as conn:
        write_events(conn, events=ev.storable(events))
    with engine.connect() as conn:
        ids = [r[0] for r in conn.exec_driver_sql("SELECT id FROM episodes ORDER BY id")]
        steps = conn.exec_driver_sql("SELECT count(*), sum(is_error), min(typeof(is_error)) FROM episode_steps").one()
    assert ids == [f"e{i:04d}" for i in range(n)]
    assert tuple(steps) == (n, 0, "integer")


def test_a_store_made_by_an_earlier_schema_loses_its_obsolete_indexes(tmp_path: Path) -> None:
    """`ix_episodes_env` and `ix_episodes_task_id` are covered by the composite indexes and cost every
    insert: a store that has them (made by an earlier version) no longer does once the schema is checked."""
    import sqlite3

    from sqlalchemy import inspect

    from envhub.store.db import create_schema, make_engine

    obsolete = {"ix_episodes_env", "ix_episodes_task_id"}
    path = tmp_path / "store.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    create_schema(engine)
    with sqlite3.connect(path) as db:  # as an earlier version left it: old indexes, no migrations
        db.execute("CREATE INDEX ix_episodes_env ON episodes (env)")
        db.execute("CREATE INDEX ix_episodes_task_id ON episodes (task_id)")
        db.execute("DROP TABLE alembic_version")
    engine.dispose()
    engine = make_engine(f"sqlite:///{path}")
    create_schema(engine)
    names = {i["name"] for i in inspect(engine).get_indexes("episodes")}
    assert not names & obsolete and {"ix_episodes_env_created", "ix_episodes_task_created"} <= names


async def test_flush_and_stop_do_not_wait_out_the_gathering(tmp_path: Path) -> None:
    """Events gather for `linger_s` before a write (many small commits cost the server's CPU); a
    flush or a stop wants them written now and cuts the gathering short."""
    from envhub.store import events as ev
    from envhub.store.db import make_engine
    from envhub.store.writer import EpisodeWriter

    writer = EpisodeWriter(make_engine(f"sqlite:///{tmp_path / 'store.sqlite3'}"), linger_s=60)
    await writer.start()
    try:
        writer.put(ev.plain({"kind": "created", "episode": _header("e1"), "reset_s": 0.001}))
        await asyncio.sleep(0.05)  # the writer is gathering now
        started = time.monotonic()
        assert await writer.flush(timeout_s=10) and writer.written == 1
        writer.put(ev.plain({"kind": "created", "episode": _header("e2"), "reset_s": 0.001}))
        await asyncio.sleep(0.05)
    finally:
        await writer.stop(timeout_s=10)
    assert writer.written == 2 and writer.dropped == 0
    assert time.monotonic() - started < 10
