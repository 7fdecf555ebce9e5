"""One outcome per episode (`one-outcome`): a refusal and an answer or a write in one episode
fail the task in either order, on a question, a write and a refusal task; a question given two
different answers fails too, though the last is right. Episodes are played through the session
manager and judged by the tasks' own verifiers; the hedge mutators are checked on each kind."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from envhub.errors import FailureClass
from envhub.spec import ResetRequest, StepRequest, ToolCall, VerifyResult
from environments.db import mutators

pytestmark = pytest.mark.slow

QUESTION = "db/bank/ask-balance-001"  # the balance of ACC-101961 is 22806.26
SET_QUESTION = "db/bank/ask-frozen-001"  # nine frozen account numbers
WRITE = "db/bank/deposit-001"  # deposit 595.25 into account 19
REFUSAL = "db/bank/refuse-close-003"  # account 16 has a balance of 16370.31: closing it is refused

HEDGE_MUTATORS = ("hedge_after", "hedge_before", "refusal_then_write", "write_then_refusal", "second_answer")


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool": tool, "arguments": arguments}


REFUSE = call("refuse", rule="balance_not_zero", figure="0.00", reason="policy does not allow it")


def oracle(hub, task_id: str) -> list[dict[str, Any]]:
    return [a.model_dump() for a in hub.families["db"].oracle_actions(hub.catalog.get(task_id))]


async def play(hub, task_id: str, actions: list[Any]) -> VerifyResult:
    """Run the calls on a fresh session of `task_id` (a callable gets the steps so far), then verify."""
    m = hub.manager
    created = await m.create(ResetRequest(env="db", task_id=task_id))
    steps = []
    try:
        for a in actions:
            a = a(steps) if callable(a) else a
            steps.append(await m.step(created.session_id, StepRequest(action=ToolCall.model_validate(a))))
        return await m.verify(created.session_id)
    finally:
        await m.close(created.session_id)


def failed(v: VerifyResult) -> list[str]:
    return [c.id for c in v.checks if not c.passed]


def assert_one_outcome_fails(v: VerifyResult) -> None:
    """Reward 0, judged (trainable), and the one-outcome gate check is among the reasons."""
    assert v.failure_class is FailureClass.ok, v.detail
    assert v.reward == 0.0 and not v.passed, failed(v)
    assert "one-outcome" in failed(v), failed(v)


@pytest.mark.parametrize("task_id", [QUESTION, WRITE, REFUSAL])
async def test_the_oracle_still_passes(db_hub, task_id):
    v = await play(db_hub, task_id, oracle(db_hub, task_id))
    assert v.reward == 1.0 and v.passed, failed(v)
    assert any(c.id == "one-outcome" and c.passed and c.kind == "anti_hack" for c in v.checks)


@pytest.mark.parametrize("task_id", [QUESTION, WRITE])
@pytest.mark.parametrize("order", ["refusal-after", "refusal-before"])
async def test_a_question_or_a_write_hedged_with_a_refusal_fails(db_hub, task_id, order):
    done = oracle(db_hub, task_id)
    v = await play(db_hub, task_id, [*done, REFUSE] if order == "refusal-after" else [REFUSE, *done])
    assert_one_outcome_fails(v)


@pytest.mark.parametrize("order", ["answer-after", "answer-before"])
async def test_a_refusal_hedged_with_an_answer_fails(db_hub, order):
    refused, answer = oracle(db_hub, REFUSAL), call("submit_answer", answer="16370.31")
    v = await play(db_hub, REFUSAL, [*refused, answer] if order == "answer-after" else [answer, *refused])
    assert_one_outcome_fails(v)


def _same_phone(steps) -> dict[str, Any]:
    """A write that changes nothing: account 16's owner's phone set to the number it has."""
    customer = steps[-1].observation.data
    return call("update_customer", customer_id=customer["id"], phone=customer["phone"])


@pytest.mark.parametrize("order", ["write-after", "write-before"])
async def test_a_refusal_with_a_successful_write_fails(db_hub, order):
    """Even a write that changes nothing (so no collateral check sees it) breaks the refusal."""
    look_up = [call("get_account", account_id=16), lambda steps: call(
        "get_customer", customer_id=steps[-1].observation.data["customer_id"]), _same_phone]
    refused = oracle(db_hub, REFUSAL)
    v = await play(db_hub, REFUSAL, [*refused, *look_up] if order == "write-after" else [*look_up, *refused])
    assert_one_outcome_fails(v)
    assert failed(v) == ["one-outcome"]


async def test_a_wrong_answer_then_the_right_one_fails(db_hub):
    """The hedge by enumeration: the last answer is right, but the episode gave two."""
    look_up, right = oracle(db_hub, QUESTION)
    v = await play(db_hub, QUESTION, [look_up, call("submit_answer", answer="22806.27"), right])
    assert_one_outcome_fails(v)
    assert failed(v) == ["one-outcome"]


async def test_the_same_answer_restated_is_one_outcome(db_hub):
    look_up, right = oracle(db_hub, QUESTION)
    v = await play(db_hub, QUESTION, [look_up, call("submit_answer", answer="$22,806.26"), right])
    assert v.reward == 1.0, failed(v)
    listing, answer = oracle(db_hub, SET_QUESTION)
    items = answer["arguments"]["answer"].split(",")
    again = call("submit_answer", answer=" and ".join(reversed(items)))
    v = await play(db_hub, SET_QUESTION, [listing, answer, again])
    assert v.reward == 1.0, failed(v)


async def test_a_refusal_on_two_grounds_fails(db_hub):
    """Refusing under every rule in turn, the right one last, is the enumeration hedge too."""
    look_up, right = oracle(db_hub, REFUSAL)
    v = await play(db_hub, REFUSAL, [look_up, call("refuse", rule="overdraft_limit", figure="16370.31",
                                                   reason="over the limit"), right])
    assert_one_outcome_fails(v)
    assert failed(v) == ["one-outcome"]


@pytest.mark.parametrize("task_id", [QUESTION, WRITE, REFUSAL])
async def test_each_hedge_mutator_is_caught_by_one_outcome(db_hub, task_id, tmp_path):
    m, fam = db_hub.manager, db_hub.families["db"]
    task = db_hub.catalog.get(task_id)
    c = await m.create(ResetRequest(env="db", task_id=task_id))
    for action in fam.oracle_actions(task):
        await m.step(c.session_id, StepRequest(action=action))
    session = m.get(c.session_id)
    await session.env.export_state(tmp_path / "oracle")
    applied = []
    for name in HEDGE_MUTATORS:
        state = tmp_path / name
        shutil.copytree(tmp_path / "oracle", state)
        if not mutators.MUTATORS[name](task, state):
            continue
        applied.append(name)
        assert_one_outcome_fails(await m.judge(task, state, session.log))
    await m.close(c.session_id)
    assert applied == {QUESTION: ["hedge_after", "hedge_before", "second_answer"],
                       WRITE: ["hedge_after", "hedge_before"],
                       REFUSAL: ["hedge_after", "hedge_before", "refusal_then_write", "write_then_refusal"]}[task_id]
