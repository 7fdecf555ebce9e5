"""Task synthesis: deterministic per seed, and the committed task set covers what it must."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from envhub.config import REPO_ROOT
from envhub.tasks.model import Task
from environments.db import domains as registry
from environments.db.synth import synthesize

TASKS = REPO_ROOT / "tasks" / "db"
REFUSE_RULES = {name: d.tool("refuse").params["rule"].enum for name, d in registry.domains().items()}


def test_same_seed_same_tasks(tmp_path: Path):
    a = synthesize(tmp_path / "a", seed=7, count=12)
    b = synthesize(tmp_path / "b", seed=7, count=12)
    assert [p.relative_to(tmp_path / "a") for p in a] == [p.relative_to(tmp_path / "b") for p in b]
    for pa in a:
        pb = tmp_path / "b" / pa.relative_to(tmp_path / "a")
        for f in ("prompt.md", "tests/expected.json", "solution/actions.json", "task.yaml"):
            assert (pa / f).read_text() == (pb / f).read_text(), f
    assert {Task.load(p).id for p in a}  # they load


def test_committed_task_set_covers_the_issue():
    tasks = [Task.load(p.parent) for p in sorted(TASKS.rglob("task.yaml"))]
    assert len(tasks) >= 200
    domains = Counter(t.config.metadata["domain"] for t in tasks)
    assert len(domains) >= 5 and min(domains.values()) >= 30, domains
    kinds = Counter(t.config.metadata["kind"] for t in tasks)
    assert kinds["read"] >= 30 and kinds["refusal"] >= 30 and kinds["write"] >= 100, kinds
    long_tasks = [t for t in tasks if t.config.metadata["oracle_calls"] >= 15]
    assert len(long_tasks) >= 10
    assert sum("multi-entity" in t.config.tags for t in tasks) >= 20
    korean = [t for t in tasks if t.config.metadata["language"] == "ko"]
    assert korean and all(any("\uac00" <= ch <= "\ud7a3" for ch in t.prompt) for t in korean)
    prompts = [t.prompt for t in tasks]
    assert len(set(prompts)) == len(prompts)


def test_every_task_has_a_verdict_a_null_agent_fails():
    for p in sorted(TASKS.rglob("expected.json")):
        exp = json.loads(p.read_text())
        kind = exp["kind"]
        assert (kind == "write" and exp["diff"]) or (kind == "read" and exp["answer"]) or \
            (kind == "refusal" and exp["refusal"]), p
        test = (p.parent / "test_state.py").read_text()
        required = {"write": "check_expected_changes", "read": "check_answer", "refusal": "check_refused"}[kind]
        assert required in test and "check_replay" in test and "check_no_collateral" in test, p
        if kind == "refusal":  # a refusal states its grounds: a rule of the domain and the figure it rests on
            assert exp["grounds"]["figure"] and "check_refusal_grounds" in test, p
            assert exp["grounds"]["rule"] in REFUSE_RULES[exp["domain"]], p


def test_every_task_judges_one_outcome_and_names_its_template():
    """Each task's verifier has the one-outcome gate (a refusal with an answer or a write, in any
    order, fails any kind of task), and its metadata names the generator's template."""
    for p in sorted(TASKS.rglob("task.yaml")):
        task = Task.load(p.parent)
        test = (p.parent / "tests" / "test_state.py").read_text()
        assert '@check("one-outcome", kind="anti_hack")' in test and "db.check_one_outcome(EXPECTED)" in test, p
        assert task.id.rsplit("-", 1)[0].endswith("/" + task.config.metadata["template"]), p
