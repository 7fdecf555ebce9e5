"""The drawn terminal set (`tasks/terminal/drawn`, `environments/terminal/generate.py`): the same bytes
for a seed anywhere, every template early in the seed range, answers no constant can guess, and a
drawn task played end to end (the oracle scores 1, doing nothing 0)."""

from __future__ import annotations

import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from envhub.config import REPO_ROOT
from envhub.core.hub import Hub
from envhub.spec import ResetRequest, StepRequest
from envhub.tasks.digest import tree_sha256
from envhub.tasks.model import Task
from envhub.tasks.sets import TaskSet
from environments.terminal import TerminalFamily
from environments.terminal.generate import ORDER, TEMPLATES, draft, template_of
from tests.conftest import running_hub

SET = REPO_ROOT / "tasks" / "terminal" / "drawn"
SET_ID = "terminal/drawn"
PER_TEMPLATE = 40


def test_a_seed_is_the_same_bytes_in_two_caches(tmp_path: Path) -> None:
    seeds = range(2 * len(TEMPLATES))
    one = TaskSet.load(SET).materialize(tmp_path / "a", seeds=seeds)
    two = TaskSet.load(SET).materialize(tmp_path / "b", seeds=seeds)
    assert [tree_sha256(one[s]) for s in seeds] == [tree_sha256(two[s]) for s in seeds]
    assert len({tree_sha256(one[s]) for s in seeds}) == len(seeds)
    for s in seeds:
        task = Task.load(one[s])
        assert task.id == f"{SET_ID}/{s}" and task.family == "terminal"
        assert task.config.metadata["template"] == template_of(s)
        assert set(task.config.metadata["proxies"]) >= {"input_lines", "files", "oracle_steps", "answer_lines"}
        assert (task.solution_dir / "solve.sh").is_file() and "@check(" in (task.tests_dir / "test_task.py").read_text()


def test_every_template_comes_early_and_fairly() -> None:
    assert len(TEMPLATES) >= 10
    assert sorted(template_of(s) for s in range(len(ORDER))) == sorted(TEMPLATES)
    counts = Counter(template_of(s) for s in range(2 * len(TEMPLATES)))
    assert set(counts.values()) == {2}


def test_no_constant_answers_a_template() -> None:
    """Per template over 40 seeds: the most common expected answer is at most 5 % of them, and no
    task's answer is another task's (a sibling's answer is never right)."""
    answers: dict[str, list[tuple[int, str]]] = defaultdict(list)
    seed = 0
    while min((len(answers[t]) for t in TEMPLATES), default=0) < PER_TEMPLATE:
        d = draft(SET_ID, seed)
        answers[d.template].append((seed, d.expected["answer"]))
        seed += 1
    for template, got in answers.items():
        texts = [a for _, a in got]
        assert all(a.strip() for a in texts), template
        top = Counter(texts).most_common(1)[0][1]
        assert top / len(texts) <= 0.05, (template, top, len(texts))
        assert len(set(texts)) == len(texts), f"{template}: two tasks share an answer"


@pytest.mark.asyncio(loop_scope="module")
async def test_drawn_tasks_end_to_end(tmp_path: Path, make_settings) -> None:
    """A git and a build task (the templates with most machinery): the oracle scores 1, doing nothing 0."""
    tasks = tmp_path / "tasks"
    (tasks / "terminal" / "drawn").mkdir(parents=True)
    shutil.copy(SET / "taskset.yaml", tasks / "terminal" / "drawn" / "taskset.yaml")
    picked = [next(s for s in range(len(ORDER)) if template_of(s) == t) for t in ("git-find-commit", "make-run")]
    hub: Hub
    async with running_hub(make_settings(tasks)) as hub:
        m = hub.manager
        for seed in picked:
            task = hub.catalog.get(f"{SET_ID}/{seed}")
            created = await m.create(ResetRequest(env="terminal", task_id=task.id))
            try:
                for call in TerminalFamily().oracle_actions(task):
                    res = await m.step(created.session_id, StepRequest(action=call))
                    assert not res.observation.is_error, res.observation.text[-2000:]
                v = await m.verify(created.session_id)
                failed = [(c.id, c.message) for c in v.checks if not c.passed]
                assert v.failure_class == "ok" and v.reward == 1.0, failed
            finally:
                await m.close(created.session_id)
            created = await m.create(ResetRequest(env="terminal", task_id=task.id))
            try:
                v = await m.verify(created.session_id)
                assert v.failure_class == "ok" and v.reward == 0.0 and not v.passed, v.checks
            finally:
                await m.close(created.session_id)


@pytest.mark.asyncio(loop_scope="module")
async def test_the_baselines_constant_is_the_written_answer_and_a_siblings_earns_nothing(tmp_path: Path,
                                                                                       make_settings) -> None:
    """`validate --baselines --by-template` plays a template's answers as constants on a task answered
    in a file (`baselines.written`): written into the prompt's output, the task's own answer passes
    (so the policy is a real try, not a no-op) and a sibling's does not."""
    from envhub.validate import baselines as bl

    tasks = tmp_path / "tasks"
    (tasks / "terminal" / "drawn").mkdir(parents=True)
    shutil.copy(SET / "taskset.yaml", tasks / "terminal" / "drawn" / "taskset.yaml")
    one, two = [s for s in range(2 * len(TEMPLATES)) if template_of(s) == "access-top"][:2]
    hub: Hub
    async with running_hub(make_settings(tasks)) as hub:
        task, sibling = hub.catalog.get(f"{SET_ID}/{one}"), hub.catalog.get(f"{SET_ID}/{two}")
        own, other = bl.written(task), bl.written(sibling)
        assert own and other and own != other
        mine = await bl.run_policy(hub.manager, task, f"answer={own}", bl._constant(own))  # noqa: SLF001
        theirs = await bl.run_policy(hub.manager, task, f"sibling={sibling.id}", bl._constant(other))  # noqa: SLF001
    assert mine is not None and (mine.failure_class, mine.reward) == ("ok", 1.0)
    assert theirs is not None and (theirs.failure_class, theirs.reward) == ("ok", 0.0)
