"""Episodes belong to whoever ran them: the store keeps the owner, and every read is a viewer's.

A real hub and SQLite store; callers as the server resolves them (`envhub.core.auth.Caller`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from envhub.core.auth import ApiKey, Caller
from envhub.spec import ResetRequest, StepRequest, ToolCall
from envhub.store import OPERATOR, PUBLIC, EpisodeStore, Viewer
from envhub.store.viewer import ORACLE_POLICY

ALICE = Caller(owner="token:alice-0000000000000000000000")
BOB = Caller(owner="token:bob-00000000000000000000000000")
ADMIN = Caller(owner="key:ops:0123456789abcdef", key=ApiKey("ops", "0" * 64, admin=True))


async def _episode(hub, caller: Caller | None, message: str, policy: str | None = None) -> str:
    m = hub.manager
    c = await m.create(ResetRequest(env="echo", task_id="echo/say-done", policy_version=policy), caller)
    await m.step(c.session_id, StepRequest(action=ToolCall(tool="echo", arguments={"message": message})), caller)
    await m.verify(c.session_id, caller)
    await m.close(c.session_id, caller)
    return c.session_id


async def test_each_reader_sees_its_own_episodes_and_an_admin_every_one(data_dir: Path, hub_with_store) -> None:
    hub = hub_with_store(data_dir)
    await hub.start()
    try:
        a, b = await _episode(hub, ALICE, "done"), await _episode(hub, BOB, "nope")
        assert await hub.store.writer.flush()
        store = hub.store
        assert [e.id for e in store.episodes(viewer=ALICE.viewer)[0]] == [a]
        assert store.episodes(viewer=BOB.viewer)[1] == 1
        assert {e.id for e in store.episodes(viewer=ADMIN.viewer)[0]} == {a, b}
        assert store.episodes(viewer=PUBLIC) == ([], 0)
        assert store.episode(a, viewer=BOB.viewer) is None and store.steps(a, viewer=BOB.viewer) == ([], 0)
        assert store.episode(a, viewer=PUBLIC) is None and store.steps(a, viewer=PUBLIC) == ([], 0)
        mine = store.episode(a, viewer=ALICE.viewer)
        assert mine is not None and [c.id for c in mine.checks] == ["said-done"]
        assert [s.arguments for s in store.steps(a, viewer=ALICE.viewer)[0]] == [{"message": "done"}]
        assert store.episode(b, viewer=ADMIN.viewer) is not None
        # Aggregates are everyone's: the second tenant sees the first's only as counts.
        summary = store.aggregate(env="echo")
        assert summary.episodes == 2 and summary.failure_classes == {"ok": 2} and summary.mean_reward == 0.5
        assert store.total(env="echo") == 2
        assert [p["policy_version"] for p in store.by_policy(viewer=BOB.viewer)] == [None]
        assert store.by_policy(viewer=PUBLIC) == []
    finally:
        await hub.stop()


async def test_a_system_runs_actions_are_an_admins_alone(data_dir: Path, hub_with_store) -> None:
    """An oracle run holds the task's solution: its owner sees the verdict, never the actions."""
    hub = hub_with_store(data_dir)
    await hub.start()
    try:
        sid = await _episode(hub, ALICE, "done", policy=ORACLE_POLICY)
        assert await hub.store.writer.flush()
        assert hub.store.episode(sid, viewer=ALICE.viewer).reward == 1.0
        assert hub.store.steps(sid, viewer=ALICE.viewer) == ([], 0)
        steps, total = hub.store.steps(sid, viewer=ADMIN.viewer)
        assert total == 1 and steps[0].arguments == {"message": "done"}
    finally:
        await hub.stop()


def test_an_episode_without_owner_is_an_admins(tmp_path: Path) -> None:
    """A row recorded before owners were kept (or in-process, without a caller) belongs to no reader."""
    v = Viewer(owner="token:x")
    assert not v.may_read(None) and OPERATOR.may_read(None) and not PUBLIC.may_read("token:x")
    assert v.may_read("token:x") and not v.may_see_actions("token:x", "envhub:oracle")


OLD_SCHEMA = """
CREATE TABLE episodes (id VARCHAR(64) PRIMARY KEY, env VARCHAR(64) NOT NULL, task_id VARCHAR(300) NOT NULL,
  harness VARCHAR(64) NOT NULL, policy_version VARCHAR(128), created_at DATETIME NOT NULL, ended_at DATETIME,
  verified_at DATETIME, step_count INTEGER NOT NULL, reward FLOAT, passed BOOLEAN, failure_class VARCHAR(32),
  trainable BOOLEAN, detail TEXT NOT NULL, verifier_sha256 VARCHAR(64), reset_s FLOAT, verify_s FLOAT,
  timings JSON NOT NULL);
CREATE TABLE episode_steps (episode_id VARCHAR(64) NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
  idx INTEGER NOT NULL, tool VARCHAR(128) NOT NULL, arguments TEXT NOT NULL, arguments_cut BOOLEAN NOT NULL,
  observation TEXT NOT NULL, observation_cut BOOLEAN NOT NULL, is_error BOOLEAN NOT NULL, failure VARCHAR(32) NOT NULL,
  elapsed_s FLOAT, PRIMARY KEY (episode_id, idx));
CREATE TABLE episode_checks (episode_id VARCHAR(64) NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
  pos INTEGER NOT NULL, check_id VARCHAR(300) NOT NULL, kind VARCHAR(32) NOT NULL, weight FLOAT NOT NULL,
  passed BOOLEAN NOT NULL, score FLOAT NOT NULL, message TEXT NOT NULL, PRIMARY KEY (episode_id, pos));
INSERT INTO episodes VALUES ('old-1', 'echo', 'echo/say-done', 'plain', 'p0', '2026-01-02 03:04:05.000000', NULL,
  NULL, 1, 1.0, 1, 'ok', 1, '', NULL, 0.1, 0.2, '{}');
INSERT INTO episode_steps VALUES ('old-1', 1, 'echo', '{"message": "done"}', 0, 'done', 0, 0, 'ok', 0.01);
"""


def test_a_store_made_before_owners_gains_the_column_and_keeps_its_rows(tmp_path: Path) -> None:
    """The schema step: an existing store file without `owner` gets the column (and its index) in
    place; its episodes stay, readable by admins, and new ones are written with their owner."""
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
    store = EpisodeStore(f"sqlite:///{path}")
    try:
        old = store.episode("old-1", viewer=OPERATOR)
        assert old is not None and (old.policy_version, old.reward, old.step_count) == ("p0", 1.0, 1)
        assert store.steps("old-1", viewer=OPERATOR)[1] == 1
        assert store.episode("old-1", viewer=ALICE.viewer) is None
    finally:
        store.engine.dispose()
    with sqlite3.connect(path) as db:
        assert "owner" in {row[1] for row in db.execute("PRAGMA table_info(episodes)")}
        assert "ix_episodes_owner_created" in {row[1] for row in db.execute("PRAGMA index_list(episodes)")}
        assert db.execute("SELECT count(*) FROM episodes").fetchone() == (1,)
    again = EpisodeStore(f"sqlite:///{path}")  # a second start finds nothing to add
    try:
        assert again.total() == 1
    finally:
        again.engine.dispose()
