"""Each validation mutator, applied to the oracle's exported state, makes the verifier fail."""

from __future__ import annotations

import shutil

import pytest

from envhub.errors import FailureClass
from envhub.spec import ResetRequest, StepRequest

pytestmark = pytest.mark.slow

TASKS = ["db/retail/place-order-001", "db/bank/ask-total-balance-001", "db/hr/refuse-overlap-001",
         "db/clinic/cancel-doctor-leave-001",
         "db/bank/refuse-card-limit-001", "db/clinic/refuse-double-book-001"]


@pytest.mark.parametrize("task_id", TASKS)
async def test_every_applicable_mutator_fails_the_verifier(db_hub, task_id, tmp_path):
    m, fam = db_hub.manager, db_hub.families["db"]
    task = db_hub.catalog.get(task_id)
    c = await m.create(ResetRequest(env="db", task_id=task_id))
    for action in fam.oracle_actions(task):
        await m.step(c.session_id, StepRequest(action=action))
    session = m.get(c.session_id)
    exported = tmp_path / "oracle"
    await session.env.export_state(exported)
    base = await m.judge(task, _copy(exported, tmp_path / "base"), session.log)
    assert base.reward == 1.0, base
    applied = 0
    for name, mutate in fam.mutators().items():
        state = _copy(exported, tmp_path / name)
        if not mutate(task, state):
            continue
        applied += 1
        v = await m.judge(task, state, session.log)
        assert v.failure_class is FailureClass.ok, f"{name}: {v.detail}"  # a kill, not an env fault
        assert v.reward == 0.0, f"mutator {name} was not caught: {v.checks}"
    assert applied >= 5
    await m.close(c.session_id)


def _copy(src, dest):
    shutil.copytree(src, dest)
    return dest
