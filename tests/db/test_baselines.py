"""Constant-policy baselines (`envhub validate --baselines`): the policies and their verdicts."""

from __future__ import annotations

import pytest

from envhub.validate import baselines as bl

pytestmark = pytest.mark.slow

REFUSAL = "db/bank/refuse-close-003"
QUESTION = "db/bank/ask-balance-001"


def test_keywords_and_outputs_come_from_the_prompt():
    prompt = "Count the ERROR lines of `logs/app.log` into `error_count.txt` for ACC-102183 ($13418.94)."
    assert bl.outputs(prompt) == ["logs/app.log", "error_count.txt"]
    kw = bl.keywords(prompt)
    assert {"logs/app.log", "ACC-102183", "13418.94", "ERROR"} <= set(kw)


async def test_policies_earn_nothing_on_a_refusal_and_a_question(db_hub):
    outcomes = []
    for task_id in (REFUSAL, QUESTION):
        task = db_hub.catalog.get(task_id)
        for name, policy in bl.POLICIES.items():
            o = await bl.run_policy(db_hub.manager, task, name, policy)
            if o is not None:
                outcomes.append(o)
    assert {o.policy for o in outcomes} == {"refuse", "empty", "fixed", "keywords", "read_all"}  # no run_tests tool
    rows = bl.summarize(outcomes)
    assert [r for r in rows if not (r["judged"] == 2 and r["mean_reward"] == 0.0 and r["ok"])] == []


def test_summary_flags_a_policy_over_the_target():
    rows = bl.summarize([bl.Outcome("db/a", "db", "refuse", 1.0, "ok", 0.1),
                         bl.Outcome("db/b", "db", "refuse", 0.0, "ok", 0.1),
                         bl.Outcome("db/c", "db", "refuse", 1.0, "env_error", 0.1)])  # masked: not counted
    assert rows == [{"family": "db", "policy": "refuse", "tasks": 3, "judged": 2, "mean_reward": 0.5,
                     "rewarded": ["db/a"], "masked": 1, "ok": False}]
