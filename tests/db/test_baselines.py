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


def test_a_template_gets_its_constant_answers_and_siblings(db_hub):
    """`template_policies`: every distinct oracle answer of a small template played on each of its
    tasks, and each task played with every sibling's answer; templates never mix."""
    tasks = [t for t in db_hub.catalog.filter(env="db") if t.taskset is None
             and t.config.metadata.get("template") in ("ask-booked-count", "ask-balance")]
    family = db_hub.families["db"]
    answers = {t.id: bl.submitted(family.oracle_actions(t)) for t in tasks}
    plays = bl.template_policies(tasks, lambda t: answers[t.id])
    for t in tasks:
        mine = {n for task, n, _ in plays if task.id == t.id}
        siblings = {a for a_id, a in answers.items() if bl.template_of(db_hub.catalog.get(a_id)) == bl.template_of(t)}
        assert {n.split("=", 1)[1] for n in mine if n.startswith("answer=")} == siblings
        assert {n.split("=", 1)[1] for n in mine if n.startswith("sibling=")} == \
            {a_id for a_id in answers if a_id != t.id and bl.template_of(db_hub.catalog.get(a_id)) == bl.template_of(t)}


def test_a_large_template_plays_its_most_common_answers_and_a_few_siblings():
    """Played in full, constants and siblings are quadratic in a template's size: a large one plays
    its 5 most common answers (the best constant among them) and 3 siblings' answers per task."""
    from types import SimpleNamespace

    tasks = [SimpleNamespace(id=f"db/t/{i}", family="db", config=SimpleNamespace(metadata={"template": "q"}))
             for i in range(40)]
    answers = {t.id: "7" if i < 6 else "3" if i < 10 else str(100 + i) for i, t in enumerate(tasks)}
    plays = bl.template_policies(tasks, lambda t: answers[t.id])  # type: ignore[arg-type]
    constants = sorted({n for _, n, _ in plays if n.startswith("answer=")})
    assert {"answer=7", "answer=3"} <= set(constants) and len(constants) == 5
    for t in tasks:
        sibs = [n for task, n, _ in plays if task is t and n.startswith("sibling=")]
        assert len(sibs) == 3 and f"sibling={t.id}" not in sibs
    assert len(plays) == 5 * 40 + 3 * 40


def test_a_task_is_replayed_with_siblings_oracles_of_its_own_template():
    """`replay=ID`: a sibling's whole oracle played call for call (a fixed action sequence is a
    constant too); never the task's own, never another template's, 3 a task in a large template."""
    from types import SimpleNamespace

    from envhub.spec import ToolCall

    tasks = [SimpleNamespace(id=f"office/t/{i}", family="office",
                             config=SimpleNamespace(metadata={"task_type": "T07" if i < 10 else "T08"}))
             for i in range(14)]
    oracle = {t.id: [ToolCall(tool="docx_edit", arguments={"path": "m.docx", "n": i})] for i, t in enumerate(tasks)}
    plays = bl.template_policies(tasks, lambda t: None, actions_of=lambda t: oracle[t.id])  # type: ignore[arg-type]
    for t in tasks:
        mine = [(n, p) for task, n, p in plays if task is t and n.startswith("replay=")]
        assert len(mine) == 3 and f"replay={t.id}" not in {n for n, _ in mine}
        for name, policy in mine:
            sibling = name.split("=", 1)[1]
            assert bl.template_of(t) == bl.template_of(next(x for x in tasks if x.id == sibling))
            assert policy(t, {}) == oracle[sibling]
    assert not any(n.startswith(("answer=", "sibling=")) for _, n, _ in plays)  # no answers to submit


async def test_by_template_finds_the_constant_answer_a_family_mean_hides(db_hub):
    """A template whose tasks share an answer: that answer, submitted without a look-up, earns the
    share of tasks it is right for, and a sibling's answer earns where siblings agree. The family's
    mean over the generic policies shows nothing of it."""
    template = "ask-booked-count"
    tasks = [t for t in db_hub.catalog.filter(env="db")
             if t.taskset is None and t.config.metadata.get("template") == template]
    family = db_hub.families["db"]
    answers = {t.id: bl.submitted(family.oracle_actions(t)) for t in tasks}
    common = max(set(answers.values()), key=list(answers.values()).count)
    outcomes = []
    for task, name, policy in bl.template_policies(tasks, lambda t: answers[t.id]):
        if name in (f"answer={common}",) or name.startswith("sibling="):
            outcomes.append(await bl.run_policy(db_hub.manager, task, name, policy))
    rows = {r["policy"]: r for r in bl.by_template(outcomes)}
    share = sum(a == common for a in answers.values()) / len(answers)
    assert rows["answer"]["answer"] == common and rows["answer"]["mean_reward"] == pytest.approx(share, abs=1e-4)
    # held out from the task it was learned from, a constant earns only where other tasks share it
    held = {r["policy"]: r for r in bl.by_template(outcomes, bl.sources(tasks, lambda t: answers[t.id]))}
    others = (sum(a == common for a in answers.values()) - 1) / (len(answers) - 1)
    assert held["answer"]["mean_reward"] == pytest.approx(others, abs=1e-4) and held["answer"]["tasks"] == len(tasks) - 1
    pairs = [(a, b) for a in answers for b in answers if a != b]
    agree = sum(answers[a] == answers[b] for a, b in pairs) / len(pairs)
    assert rows["sibling"]["mean_reward"] == pytest.approx(agree, abs=1e-4)
    assert rows["answer"]["ok"] is (share <= bl.TARGET)


def test_by_template_keeps_each_templates_best_answer():
    def o(template: str, policy: str, reward: float, failure: str = "ok") -> bl.Outcome:
        return bl.Outcome(f"{template}-x", "db", policy, reward, failure, 0.1, template)

    rows = bl.by_template([o("db/a", "answer=1", 1.0), o("db/a", "answer=1", 0.0), o("db/a", "answer=2", 0.0),
                           o("db/a", "answer=2", 0.0), o("db/a", "sibling=db/a-y", 0.0),
                           o("db/a", "refuse", 1.0, "env_error"), o("db/b", "answer=7", 0.0)])
    assert [(r["template"], r["policy"], r.get("answer"), r["mean_reward"], r["masked"], r["ok"]) for r in rows] == [
        ("db/a", "answer", "1", 0.5, 0, False), ("db/a", "refuse", None, 0.0, 1, True),
        ("db/a", "sibling", None, 0.0, 0, True), ("db/b", "answer", "7", 0.0, 0, True)]
