"""Copies of a live db episode (forks and snapshots, `environments/db/family.py`), on SQLite and
PostgreSQL: a copy has the source's database and call log, so its process checks judge the calls
made before the copy, and a snapshot outlives the server."""

from __future__ import annotations

from pathlib import Path

import pytest

from envhub.errors import FailureClass
from envhub.spec import ForkRequest, ResetRequest
from tests.conftest import running_hub
from tests.db.conftest import ENGINES, PG_URL, hub_settings
from tests.db.test_sessions import step

pytestmark = pytest.mark.slow


async def test_a_fork_carries_the_call_log_its_process_checks_judge(db_hub):
    """refuse-cancel's refusal must follow a look-up of the order: made before the fork, it counts
    in the fork; a session that only refuses fails the same check."""
    m = db_hub.manager
    task = "db/retail/refuse-cancel-001"
    source = (await m.create(ResetRequest(env="db", task_id=task))).session_id
    bare = (await m.create(ResetRequest(env="db", task_id=task))).session_id
    assert (await step(m, source, "get_order", order_id=149)).failure is FailureClass.ok
    forks = [f.session_id for f in await m.fork(source, ForkRequest(n=2))]  # the copies start side by side
    refusal = {"rule": "order_not_cancellable", "figure": "delivered", "reason": "order 149 is already delivered"}
    try:
        for sid in forks:
            assert m.get(sid).env.calls == m.get(source).env.calls  # type: ignore[attr-defined]
        for sid in (forks[0], bare):
            assert (await step(m, sid, "refuse", **refusal)).failure is FailureClass.ok
        judged = await m.verify(forks[0])
        assert judged.passed, judged.checks
        unjudged = await m.verify(bare)
        assert not unjudged.passed and "refusal-justified" in {c.id for c in unjudged.checks if not c.passed}
        assert m.get(source).env.calls[-1]["tool"] == "get_order"  # type: ignore[attr-defined]
    finally:
        for sid in (source, bare, *forks):
            await m.close(sid)


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_snapshot_outlives_the_server_with_its_database_and_calls(engine: str, private_data_dir: Path):
    settings = hub_settings(private_data_dir, PG_URL if engine == "postgres" else None)
    task = "db/retail/update-email-001"
    async with running_hub(settings) as hub:
        m = hub.manager
        source = (await m.create(ResetRequest(env="db", task_id=task))).session_id
        rejected = await step(m, source, "update_customer", customer_id=42, email="not-an-email")
        assert rejected.failure is FailureClass.agent_error  # logged, and replayed as rejected on PostgreSQL
        await step(m, source, "update_customer", customer_id=42, email="darlene.smith35@fastmail.test")
        info = await m.snapshot(source)
        await step(m, source, "update_customer", customer_id=7, city="Later")  # after: not in the copy
        await m.close(source)
    async with running_hub(settings) as hub:
        m = hub.manager
        started = (await m.create(ResetRequest(env="db", from_snapshot=info.snapshot_id))).session_id
        try:
            env = m.get(started).env
            assert [c["ok"] for c in env.calls] == [False, True]  # type: ignore[attr-defined]
            assert (await step(m, started, "get_customer", customer_id=42)).observation.data["email"] == (
                "darlene.smith35@fastmail.test")
            assert (await step(m, started, "get_customer", customer_id=7)).observation.data["city"] != "Later"
            verdict = await m.verify(started)  # the oracle's write, before the snapshot: it passes
            assert verdict.passed, verdict.checks
        finally:
            await m.close(started)
            m.delete_snapshot(info.snapshot_id)
