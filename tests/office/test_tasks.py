"""The generated task set: coverage of the matrix, determinism, oracle/noop and mutators end to end."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest
import yaml

from environments.office import generate, tasktypes
from environments.office.data import INDUSTRIES
from envhub.spec import ResetRequest, StepRequest

from envhub.config import REPO_ROOT

OFFICE = REPO_ROOT / "tasks" / "office"
#: One task per type, mixing languages and industries.
SAMPLE = ["office/banking/t01-clean", "office/insurance/t02-model", "office/healthcare/t03-summary",
          "office/manufacturing/t04-reconcile", "office/retail/t05-report", "office/realestate/t06-merge",
          "office/government/t07-restructure", "office/professional/t08-deck", "office/media/t09-update",
          "office/education/t10-extract", "office/transport/t11-packet", "office/banking/t12-consistency-ko"]


def _configs():
    return [yaml.safe_load(p.read_text()) for p in sorted(OFFICE.rglob("task.yaml"))]


def test_every_cell_of_the_matrix_is_covered():
    cells = Counter((c["metadata"]["industry"], c["metadata"]["task_type"]) for c in _configs())
    missing = [(i, t) for i in INDUSTRIES for t in tasktypes.TYPES if not cells[(i, t)]]
    assert not missing and len(INDUSTRIES) * len(tasktypes.TYPES) == 132
    assert sum(cells.values()) >= 132


def test_korean_tasks_with_korean_documents():
    ko = [c for c in _configs() if c["metadata"]["language"] == "ko"]
    assert len(ko) >= 24
    prompt = (OFFICE / ko[0]["id"].split("/", 1)[1] / "prompt.md").read_text()
    assert any("\uac00" <= ch <= "\ud7a3" for ch in prompt)


def test_metadata_records_the_seed():
    for c in _configs():
        m = c["metadata"]
        assert {"seed", "industry", "task_type", "language", "deliverables"} <= set(m)


def test_same_seed_same_tasks_other_seed_fresh(tmp_path):
    a = generate.build_task(tmp_path / "a", "T01", "retail", "en", 11, None)
    b = generate.build_task(tmp_path / "b", "T01", "retail", "en", 11, None)
    c = generate.build_task(tmp_path / "c", "T01", "retail", "en", 12, None)
    read = lambda p: json.loads((p / "tests" / "expected.json").read_text())  # noqa: E731
    assert read(a)["rows"] == read(b)["rows"]
    assert read(a)["rows"] != read(c)["rows"]


async def _run(hub, task_id, oracle: bool):
    m = hub.manager
    created = await m.create(ResetRequest(env="office", task_id=task_id))
    if oracle:
        for action in hub.families["office"].oracle_actions(hub.catalog.get(task_id)):
            r = await m.step(created.session_id, StepRequest(action=action))
            assert not r.observation.is_error, r.observation.text
    return created.session_id


@pytest.mark.parametrize("task_id", SAMPLE)
async def test_oracle_passes_and_noop_fails(hub, task_id):
    sid = await _run(hub, task_id, oracle=True)
    v = await hub.manager.verify(sid)
    assert v.failure_class.value == "ok" and v.reward == 1.0, [c for c in v.checks if not c.passed] or v.detail
    sid = await _run(hub, task_id, oracle=False)
    v = await hub.manager.verify(sid)
    assert v.failure_class.value == "ok" and v.reward == 0.0 and not v.passed, v.detail


@pytest.mark.slow
@pytest.mark.parametrize("task_id", ["office/insurance/t02-model", "office/retail/t05-report",
                                     "office/professional/t08-deck", "office/transport/t11-packet"])
async def test_mutants_fail(hub, task_id, tmp_path):
    sid = await _run(hub, task_id, oracle=True)
    session = hub.manager.get(sid)
    gold = tmp_path / "gold"
    await session.env.export_state(gold)
    task = hub.catalog.get(task_id)
    applied = []
    for name, mutate in hub.families["office"].mutators().items():
        state = tmp_path / name
        shutil.copytree(gold, state)
        if not mutate(task, state):
            continue
        applied.append(name)
        v = await hub.manager.judge(task, state, [])
        assert v.failure_class.value == "ok", f"{name}: {v.failure_class} {v.detail}"
        assert not v.passed and v.reward == 0.0, f"mutant {name} passed"
    assert {"corrupt_zip", "wrong_type", "stuff_keywords", "delete_section"} <= set(applied)
    await hub.manager.close(sid)
