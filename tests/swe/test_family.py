"""The swe family through the in-process session manager: tools, oracle resolves, noop does not."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from envhub.config import REPO_ROOT
from envhub.core.hub import Hub
from envhub.spec import ResetRequest, StepRequest, ToolCall
from tests.conftest import make_settings, running_hub
from tests.swe.conftest import load, require_toolchain

MY_LANGUAGES = ("python", "javascript", "typescript", "go", "rust", "java", "c", "cpp", "csharp")
TASK_IDS = sorted(f"swe/{p.parent.name}/{p.name}" for lang in MY_LANGUAGES
                  for p in (REPO_ROOT / "tasks" / "swe" / lang).glob("*") if (p / "task.yaml").is_file())
SLOW = {"rust", "java", "csharp", "cpp"}


@pytest.fixture
async def swe_hub() -> AsyncIterator[Hub]:
    async with running_hub(make_settings(families=["swe"])) as h:
        yield h


async def _step(hub: Hub, sid: str, tool: str, **arguments):
    return await hub.manager.step(sid, StepRequest(action=ToolCall(tool=tool, arguments=arguments)))


async def test_tools(swe_hub: Hub):
    require_toolchain("python")
    m = swe_hub.manager
    c = await m.create(ResetRequest(env="swe", task_id="swe/python/interval-merge"))
    assert "python repository" in c.observation.text
    sid = c.session_id
    r = await _step(swe_hub, sid, "view_file", path="intervalset/core.py", start_line=1, end_line=3)
    assert r.observation.text.splitlines()[0].strip().startswith("1")
    r = await _step(swe_hub, sid, "search", pattern="def add")
    assert "intervalset/core.py" in r.observation.text
    r = await _step(swe_hub, sid, "str_replace", path="intervalset/core.py", old="return", new="return")
    assert r.failure == "agent_error" and "exactly once" in r.observation.text
    r = await _step(swe_hub, sid, "create_file", path="notes/todo.txt", content="hi\n")
    assert not r.observation.is_error
    r = await _step(swe_hub, sid, "bash", command="cat notes/todo.txt && git status --short && ls tests")
    assert "hi" in r.observation.text and "test_core.py" in r.observation.text
    r = await _step(swe_hub, sid, "bash", command="git log --oneline | wc -l")
    assert r.observation.text.split()[0] == "1"  # only the base commit is reachable
    r = await _step(swe_hub, sid, "run_tests")
    assert "14 passed, 0 not passing" in r.observation.text
    r = await _step(swe_hub, sid, "apply_patch", patch="--- a/nope\n+++ b/nope\n@@ -1 +1 @@\n-x\n+y\n")
    assert r.failure == "agent_error"
    r = await _step(swe_hub, sid, "bash", command="echo still alive")
    assert "still alive" in r.observation.text
    await m.close(sid)


@pytest.mark.parametrize("task_id", [pytest.param(t, marks=pytest.mark.slow) if t.split("/")[1] in SLOW else t
                                     for t in TASK_IDS])
async def test_oracle_resolves_and_noop_does_not(swe_hub: Hub, task_id: str):
    require_toolchain(task_id.split("/")[1])
    m = swe_hub.manager
    task = load(task_id)
    oracle = await m.create(ResetRequest(env="swe", task_id=task_id))
    for action in swe_hub.families["swe"].oracle_actions(task):
        r = await m.step(oracle.session_id, StepRequest(action=action))
        assert r.failure == "ok", r.observation.text
    v = await m.verify(oracle.session_id)
    assert v.failure_class == "ok" and v.passed and v.reward == 1.0, (v.detail, v.checks)
    noop = await m.create(ResetRequest(env="swe", task_id=task_id))
    v = await m.verify(noop.session_id)
    assert v.failure_class == "ok" and not v.passed and v.reward == 0.0, (v.detail, v.checks)
    assert not next(c for c in v.checks if c.id == "fail_to_pass").passed
