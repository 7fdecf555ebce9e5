"""Sessions through the in-process manager: isolation, faults, oracle and null agent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from envhub.errors import FailureClass
from envhub.spec import ResetRequest, StepRequest, ToolCall
from environments.db.store import PgHandle, SqliteHandle
from tests.conftest import running_hub
from tests.db.conftest import PG_URL

pytestmark = pytest.mark.slow

# One task per domain and kind (the full set is covered by `envhub validate --env db`), and drawn
# tasks of two groups, each over a database of its own (`environments/db/generate.py`).
SAMPLE = ["db/retail/place-order-001", "db/retail/ask-refundable-001", "db/retail/refuse-over-refund-001",
          "db/bank/own-transfer-001", "db/hr/payroll-run-001", "db/clinic/book-appointment-001",
          "db/clinic/refuse-weekend-001", "db/logistics/delivery-manifest-001", "db/logistics/ask-heaviest-001",
          "db/drawn/3", "db/drawn/12"]


async def step(m, sid: str, tool: str, **arguments):
    return await m.step(sid, StepRequest(action=ToolCall(tool=tool, arguments=arguments)))


@pytest.mark.parametrize("task_id", SAMPLE)
async def test_oracle_passes_and_noop_fails(db_hub, task_id):
    m, fam = db_hub.manager, db_hub.families["db"]
    task = db_hub.catalog.get(task_id)
    c = await m.create(ResetRequest(env="db", task_id=task_id))
    for action in fam.oracle_actions(task):
        r = await m.step(c.session_id, StepRequest(action=action))
        assert r.failure is FailureClass.ok, r.observation.text
    v = await m.verify(c.session_id)
    assert (v.failure_class, v.reward) == (FailureClass.ok, 1.0), v
    noop = await m.create(ResetRequest(env="db", task_id=task_id))
    v0 = await m.verify(noop.session_id)
    assert (v0.failure_class, v0.reward) == (FailureClass.ok, 0.0), v0


async def test_concurrent_sessions_do_not_see_each_other(db_hub):
    m = db_hub.manager
    task = "db/retail/update-email-001"
    a, b = await asyncio.gather(*(m.create(ResetRequest(env="db", task_id=task)) for _ in range(2)))
    await asyncio.gather(step(m, a.session_id, "update_customer", customer_id=7, city="Alpha"),
                         step(m, b.session_id, "update_customer", customer_id=7, city="Beta"))
    got = await asyncio.gather(step(m, a.session_id, "get_customer", customer_id=7),
                               step(m, b.session_id, "get_customer", customer_id=7))
    assert [g.observation.data["city"] for g in got] == ["Alpha", "Beta"]
    fresh = await m.create(ResetRequest(env="db", task_id=task))
    r = await step(m, fresh.session_id, "get_customer", customer_id=7)
    assert r.observation.data["city"] not in ("Alpha", "Beta")


async def test_rule_violation_is_agent_error_and_episode_goes_on(db_hub):
    m = db_hub.manager
    c = await m.create(ResetRequest(env="db", task_id="db/retail/refuse-over-refund-001"))
    r = await step(m, c.session_id, "refund_order", order_id=5, amount=1_000_000, reason="x")
    assert r.failure is FailureClass.agent_error and "exceeds" in r.observation.text
    r = await step(m, c.session_id, "get_order", order_id=5)
    assert r.failure is FailureClass.ok


def _session_env(hub, sid: str):
    return hub.manager.get(sid).env


async def test_database_deleted_mid_episode_is_env_error(db_hub):
    m = db_hub.manager
    c = await m.create(ResetRequest(env="db", task_id="db/retail/update-email-001"))
    handle = _session_env(db_hub, c.session_id).handle
    if isinstance(handle, SqliteHandle):
        handle.path.unlink()
    else:
        assert isinstance(handle, PgHandle)
        handle.store.drop_database(handle.name)
    r = await step(m, c.session_id, "update_customer", customer_id=7, city="Gone")
    assert r.failure is FailureClass.env_error and not r.trainable
    v = await m.verify(c.session_id)
    assert v.failure_class is FailureClass.env_error and not v.trainable


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="ENVHUB_TEST_POSTGRES_URL is not set")
async def test_postgres_connection_dropped_is_env_error(private_data_dir):
    from tests.db.conftest import hub_settings

    async with running_hub(hub_settings(private_data_dir, PG_URL)) as hub:
        m = hub.manager
        c = await m.create(ResetRequest(env="db", task_id="db/bank/update-phone-001"))
        assert (await step(m, c.session_id, "get_customer", customer_id=1)).failure is FailureClass.ok
        name = _session_env(hub, c.session_id).handle.name
        admin = create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://", 1),
                              isolation_level="AUTOCOMMIT", poolclass=NullPool)
        with admin.connect() as conn:
            killed = conn.execute(text("select count(pg_terminate_backend(pid)) from pg_stat_activity "
                                       "where datname = :d"), {"d": name}).scalar_one()
        admin.dispose()
        assert killed >= 1
        r = await step(m, c.session_id, "get_customer", customer_id=1)
        assert r.failure is FailureClass.env_error
        assert (await m.verify(c.session_id)).failure_class is FailureClass.env_error
        await m.close(c.session_id)


async def test_closed_sessions_drop_their_databases(db_hub):
    m = db_hub.manager
    c = await m.create(ResetRequest(env="db", task_id="db/hr/ask-salary-001"))
    handle = _session_env(db_hub, c.session_id).handle
    await m.close(c.session_id)
    if isinstance(handle, SqliteHandle):
        assert not Path(handle.path).exists()
    else:
        assert not handle.store._exists(handle.name)


@pytest.mark.parametrize(("task_id", "tool", "arguments", "names"), [
    ("db/hr/payroll-run-001", "get_employee", {"employee_id": 10**30}, "'employee_id'"),
    ("db/bank/own-transfer-001", "deposit", {"account_id": 1, "amount": 1e30, "memo": "x"}, "'amount'"),
    ("db/clinic/book-appointment-001", "book_appointment",
     {"patient_id": 1, "doctor_id": 1, "starts_at": "9999-12-31T23:59"}, "'starts_at'"),
    ("db/bank/own-transfer-001", "search_customers", {"name": "\ud800"}, "'name'"),
    ("db/bank/own-transfer-001", "submit_answer", {"answer": "12\ud800"}, "'answer'"),
])
async def test_inputs_that_crashed_tools_are_the_agents_error(db_hub, task_id, tool, arguments, names):
    """Each of these once raised inside a tool or the export (graded env_error, masked from training)."""
    m = db_hub.manager
    c = await m.create(ResetRequest(env="db", task_id=task_id))
    r = await step(m, c.session_id, tool, **arguments)
    assert r.failure is FailureClass.agent_error and names in r.observation.text, r.observation.text
    v = await m.verify(c.session_id)
    assert v.failure_class is FailureClass.ok, v  # the export still works: nothing unencodable was recorded
