"""Every terminal task, through the real session manager: the oracle scores 1.0, doing nothing
scores 0 (judged, failure class `ok`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from envhub.config import REPO_ROOT, get_settings
from envhub.core.hub import Hub
from envhub.env import EnvContext
from envhub.sandbox.local import LocalBackend
from envhub.spec import ResetRequest, StepRequest, ToolCall
from envhub.tasks.model import Task
from environments.terminal import TerminalFamily


def _task_dirs() -> list[Task]:
    root = REPO_ROOT / "tasks"
    found = [Task.load(p.parent) for p in (root / "terminal").rglob("task.yaml")
             if not {"state", "tests", "solution"} & set(p.relative_to(root).parts[:-1])]
    return sorted(found, key=lambda t: t.id)


TASKS = _task_dirs()
IDS = [t.id for t in TASKS] if TASKS else []

def test_catalogue_is_large_enough() -> None:
    assert len(TASKS) >= 30, f"only {len(TASKS)} terminal tasks"
    assert len(set(IDS)) == len(IDS)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("task", TASKS, ids=IDS)
async def test_oracle_scores_max(hub: Hub, task: Task) -> None:
    m = hub.manager
    created = await m.create(ResetRequest(env="terminal", task_id=task.id))
    try:
        for call in TerminalFamily().oracle_actions(task):
            res = await m.step(created.session_id, StepRequest(action=call))
            assert not res.observation.is_error, res.observation.text[-2000:]
        v = await m.verify(created.session_id)
        assert v.failure_class == "ok", v.detail
        assert v.reward == 1.0, [(c.id, c.message) for c in v.checks if not c.passed]
    finally:
        await m.close(created.session_id)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("task", TASKS, ids=IDS)
async def test_noop_scores_zero(hub: Hub, task: Task) -> None:
    m = hub.manager
    created = await m.create(ResetRequest(env="terminal", task_id=task.id))
    try:
        v = await m.verify(created.session_id)
        assert v.failure_class == "ok", v.detail
        assert v.reward == 0.0 and not v.passed, v.checks
    finally:
        await m.close(created.session_id)


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_task_shape(task: Task) -> None:
    """Static rules for this catalogue: small public state, a shell oracle, hidden checks."""
    size = sum(p.stat().st_size for p in task.state_dir.rglob("*") if p.is_file()) if task.state_dir.is_dir() else 0
    assert size < 1024 * 1024, f"state is {size} bytes"
    assert (task.solution_dir / "solve.sh").is_file()
    assert task.prompt and task.config.title
    tests = "".join(p.read_text() for p in task.tests_dir.glob("test_*.py"))
    assert "@check(" in tests, "every verifier test declares its check"


async def test_a_tasks_cpus_reach_the_agents_sandbox(tmp_path: Path) -> None:
    """`limits.cpus` in task.yaml limits the agent's sandbox, not only the verifier (#17)."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs a host with at least 2 CPUs to show a limit")
    folder = tmp_path / "archive-site"
    shutil.copytree(REPO_ROOT / "tasks" / "terminal" / "archive-site", folder)
    config = (folder / "task.yaml").read_text().replace("max_steps: 30}", "max_steps: 30, cpus: 1}")
    (folder / "task.yaml").write_text(config)
    settings = get_settings()
    env = TerminalFamily().make(EnvContext(settings=settings, sandbox=LocalBackend(settings.data_dir / "sandboxes"),
                                           sessions_dir=tmp_path, session_id="cpus"))
    try:
        await env.reset(task=Task.load(folder))
        obs = await env.step(ToolCall(tool="bash", arguments={"command": "nproc"}))
        assert obs.text.split()[0] == "1", obs.text
    finally:
        await env.close()
