"""Harness skins: each reshapes a live session's tools, and loses nothing — the oracle, written once
against the canonical tools, earns the same reward through every skin that supports the family,
and doing nothing earns none."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from envhub import harness
from envhub.core.hub import Hub
from envhub.errors import FailureClass
from envhub.harness import HarnessUnsupported
from envhub.spec import ResetRequest, StepRequest, ToolCall
from tests.conftest import make_settings, running_hub

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the module-scoped hub

SKINS = sorted(harness.registered())
#: A task per family; swe only where its toolchain is installed (checked in the test).
TASKS = ["terminal/count-error-lines", "terminal/fix-permissions", "db/bank/ask-balance-001",
         "echo/say-done", "office/banking/t01-clean", "swe/python/interval-merge"]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def hub() -> AsyncIterator[Hub]:
    async with running_hub(make_settings(families=["echo", "terminal", "db", "office", "swe"], store_enabled=False)) as h:
        yield h


async def step(hub: Hub, sid: str, tool: str, **arguments):
    return await hub.manager.step(sid, StepRequest(action=ToolCall(tool=tool, arguments=arguments)))


async def test_the_shipped_skins_are_registered() -> None:
    assert {"plain", "mcp", "openhands", "claude-code", "codex", "swe-agent"} <= set(SKINS)


@pytest.mark.parametrize("skin", SKINS)
@pytest.mark.parametrize("task_id", TASKS)
async def test_the_oracle_through_every_skin_earns_what_it_earns_plain(hub: Hub, skin: str, task_id: str) -> None:
    task = hub.catalog.get(task_id)
    if task.family == "swe":
        from environments.swe.toolchains import status

        if not status("python").present:
            pytest.skip("python toolchain missing")
    family = hub.families[task.family]
    try:
        created = await hub.manager.create(ResetRequest(env=task.family, task_id=task_id, harness=skin))
    except HarnessUnsupported as e:
        assert task.family in ("db", "office", "echo") and skin not in ("plain", "mcp"), e.detail
        return
    sid = created.session_id
    shown = {t.name for t in created.tools}
    session = hub.manager.sessions[sid]
    for action in family.oracle_actions(task):
        for call in session.skin.express(action, session.canonical):
            assert call.tool in shown
            result = await hub.manager.step(sid, StepRequest(action=call))
            assert result.failure is FailureClass.ok, result.observation.text[-500:]
    verdict = await hub.manager.verify(sid)
    assert (verdict.failure_class, verdict.reward) == (FailureClass.ok, 1.0), verdict
    assert hub.manager.sessions[sid].harness == skin
    noop = await hub.manager.create(ResetRequest(env=task.family, task_id=task_id, harness=skin))
    nothing = await hub.manager.verify(noop.session_id)
    assert nothing.reward == 0.0 or task.config.null_expected == "pass"
    for s in (sid, noop.session_id):
        await hub.manager.close(s)


async def test_a_skin_that_cannot_present_a_family_is_a_clear_4xx(hub: Hub) -> None:
    with pytest.raises(HarnessUnsupported, match="codex.*db") as e:
        await hub.manager.create(ResetRequest(env="db", task_id="db/bank/ask-balance-001", harness="codex"))
    assert e.value.status == 422
    assert not [s for s in hub.manager.sessions.values() if s.task.id == "db/bank/ask-balance-001"]


async def test_a_skin_call_is_checked_against_the_skins_declaration(hub: Hub) -> None:
    created = await hub.manager.create(ResetRequest(env="terminal", task_id=TASKS[0], harness="claude-code"))
    bad = await step(hub, created.session_id, "Bash", cmd="ls")  # Claude's Bash takes `command`
    assert bad.failure is FailureClass.agent_error and "'cmd'" in bad.observation.text
    canonical = await step(hub, created.session_id, "bash", command="ls")  # the canonical name is not shown
    assert canonical.failure is FailureClass.agent_error and "unknown tool" in canonical.observation.text
    await hub.manager.close(created.session_id)


async def test_openhands_editor(hub: Hub) -> None:
    sid = (await hub.manager.create(ResetRequest(env="terminal", task_id=TASKS[0], harness="openhands"))).session_id
    ed = "str_replace_editor"
    assert (await step(hub, sid, ed, command="create", path="a.txt", file_text="one\ntwo\n")).failure is FailureClass.ok
    again = await step(hub, sid, ed, command="create", path="a.txt", file_text="x")
    assert again.failure is FailureClass.agent_error and "already exists" in again.observation.text
    assert (await step(hub, sid, ed, command="str_replace", path="a.txt", old_str="two", new_str="2")).failure \
        is FailureClass.ok
    await step(hub, sid, ed, command="insert", path="a.txt", insert_line=1, new_str="one and a half")
    view = await step(hub, sid, ed, command="view", path="a.txt")
    assert view.observation.text.split("\n") == ["     1\tone", "     2\tone and a half", "     3\t2"]
    await step(hub, sid, ed, command="undo_edit", path="a.txt")
    shown = await step(hub, sid, "execute_bash", command="cat a.txt")
    assert shown.observation.text.startswith("one\n2\n")
    await hub.manager.close(sid)


async def test_claude_code_read_edit_grep_glob(hub: Hub) -> None:
    sid = (await hub.manager.create(ResetRequest(env="terminal", task_id=TASKS[0], harness="claude-code"))).session_id
    await step(hub, sid, "Write", file_path="src/m.py", content="x = 1\ny = 1\n")
    dup = await step(hub, sid, "Edit", file_path="src/m.py", old_string="1", new_string="2")
    assert dup.failure is FailureClass.agent_error and "2 times" in dup.observation.text
    await step(hub, sid, "Edit", file_path="src/m.py", old_string="1", new_string="2", replace_all=True)
    read = await step(hub, sid, "Read", file_path="src/m.py", offset=2)
    assert read.observation.text == "     2\ty = 2"
    grep = await step(hub, sid, "Grep", pattern="y = ", path="src")
    assert grep.observation.text.strip() == "src/m.py"
    glob = await step(hub, sid, "Glob", pattern="**/*.py")
    assert "src/m.py" in glob.observation.text.split("\n")
    await hub.manager.close(sid)


async def test_codex_apply_patch_adds_updates_and_deletes(hub: Hub) -> None:
    sid = (await hub.manager.create(ResetRequest(env="terminal", task_id=TASKS[0], harness="codex"))).session_id
    add = "*** Begin Patch\n*** Add File: n.txt\n+alpha\n+beta\n+gamma\n*** Add File: gone.txt\n+x\n*** End Patch"
    assert (await step(hub, sid, "apply_patch", input=add)).failure is FailureClass.ok
    update = ("*** Begin Patch\n*** Update File: n.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n"
              "*** Delete File: gone.txt\n*** End Patch")
    assert (await step(hub, sid, "apply_patch", input=update)).failure is FailureClass.ok
    out = await step(hub, sid, "shell", command=["bash", "-lc", "cat n.txt; ls gone.txt 2>&1 || true"])
    assert out.observation.text.startswith("alpha\nBETA\ngamma\n") and "No such file" in out.observation.text
    stale = await step(hub, sid, "apply_patch", input="*** Begin Patch\n*** Update File: n.txt\n-nope\n+x\n"
                                                      "*** End Patch")
    assert stale.failure is FailureClass.agent_error and "not found" in stale.observation.text
    await hub.manager.close(sid)


async def test_swe_agent_window_and_line_edit(hub: Hub) -> None:
    sid = (await hub.manager.create(ResetRequest(env="terminal", task_id=TASKS[0], harness="swe-agent"))).session_id
    await step(hub, sid, "bash", command="seq 1 250 > n.txt")
    opened = await step(hub, sid, "open", path="n.txt", line_number=200)
    assert opened.observation.data["first"] == 150 and "(1 more lines below)" in opened.observation.text
    await step(hub, sid, "edit", start_line=3, end_line=5, replacement="three to five")
    out = await step(hub, sid, "bash", command="sed -n 2,4p n.txt")
    assert out.observation.text.startswith("2\nthree to five\n6\n")
    await hub.manager.close(sid)


async def test_mcp_skin_answers_in_mcp_result_shape(hub: Hub) -> None:
    created = await hub.manager.create(ResetRequest(env="db", task_id="db/bank/ask-balance-001", harness="mcp"))
    sid = created.session_id
    r = await step(hub, sid, "get_account", account_id=1)
    data = r.observation.data
    assert data["isError"] is False and data["content"][0]["type"] == "text" and data["structuredContent"]["id"] == 1
    await hub.manager.close(sid)


async def test_the_registry_says_which_skins_present_each_family(hub: Hub) -> None:
    db, terminal = hub.registry.env_info("db").harnesses, hub.registry.env_info("terminal").harnesses
    assert db["plain"] is None and db["mcp"] is None and "typed" in db["codex"]
    assert all(reason is None for reason in terminal.values())
