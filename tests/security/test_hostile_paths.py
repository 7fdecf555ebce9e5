"""Hostile paths are the agent's: every file tool of every family and skin, given a path the agent
made hostile, answers an `agent_error` naming why, never a crash (a masked `env_error`) nor a hang,
and the session stays healthy: the next ordinary step works and the verify is judged as usual.

The paths are judged inside the agent's sandbox, where the tools read them: `/etc/shadow` is the
sandbox's copy, unreadable to it; a FIFO would block a read or a write that opened it; `/dev/zero`
never ends; `/proc/self/mem` fails with EIO. Office tools run on the host, over the session's
document folder: there a folder, a FIFO (as a template could ship) or a name the OS refuses where a
document is named is the agent's error too. And no tool runs past the step deadline: a slow
`run_tests` is cut at the task's step limit as the agent's timeout, never the session's.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envhub.config import REPO_ROOT, Settings
from envhub.core.hub import Hub
from envhub.errors import FailureClass
from envhub.spec import ResetRequest, StepRequest, StepResult, ToolCall
from tests.conftest import running_hub
from tests.security.conftest import TRAINABLE

pytestmark = pytest.mark.asyncio(loop_scope="module")

TERMINAL = "terminal/count-error-lines"
SWE = "swe/python/interval-merge"
OFFICE = "office/banking/t01-clean"
#: What the agent's own commands make before it hands the paths to a file tool. The huge file is
#: sparse: 64 MiB, far over every tool's limit, costing no disk.
SETUP = ("mkfifo /tmp/fifo && ln -s loop-b /tmp/loop-a && ln -s loop-a /tmp/loop-b && mkdir -p /tmp/folder "
         "&& truncate -s 64M /tmp/huge && echo secret > /tmp/locked && chmod 000 /tmp/locked")


@dataclass(frozen=True)
class Hostile:
    """A hostile path, and what a read and a write of it must say (None: the write is allowed)."""

    kind: str
    path: str
    read: str
    write: str | None


ANY_PROC = "kernel pseudo-file|No such file or directory|Permission denied"  # /proc/kcore: absent or root's
HOSTILE = [
    Hostile("unreadable", "/etc/shadow", "Permission denied", "Read-only file system"),
    Hostile("mode 000", "/tmp/locked", "Permission denied", "Permission denied"),
    Hostile("fifo", "/tmp/fifo", "is a FIFO, not a regular file", "is a FIFO, not a regular file"),
    Hostile("/dev/zero", "/dev/zero", "is a character device", "is a character device"),
    Hostile("/dev/urandom", "/dev/urandom", "is a character device", "is a character device"),
    Hostile("symlink loop", "/tmp/loop-a", "Too many levels of symbolic links", "Too many levels of symbolic links"),
    Hostile("folder", "/tmp/folder", "Is a directory", "Is a directory"),
    Hostile("huge", "/tmp/huge", "over this tool's limit", None),
    Hostile("/proc/self/mem", "/proc/self/mem", "kernel pseudo-file", "kernel pseudo-file"),
    Hostile("/proc/self/environ", "/proc/self/environ", "kernel pseudo-file", "kernel pseudo-file"),
    Hostile("/proc/kcore", "/proc/kcore", ANY_PROC, ANY_PROC),
]
if not os.path.exists("/etc/shadow"):
    HOSTILE = HOSTILE[1:]


@dataclass(frozen=True)
class FileTool:
    """One file tool as a skin shows it: how to call it on a path, and what it does with one.

    `mode` is read, write or search. `folders`: a folder is a fine answer (a view lists it, a
    search goes through it). `exists`: a write that refuses any existing path ("already exists")."""

    harness: str
    tool: str
    args: Callable[[str], dict[str, Any]]
    mode: str
    folders: bool = False
    exists: bool = False

    @property
    def name(self) -> str:
        command = self.args("p")["command"] if self.tool == "str_replace_editor" else None
        return f"{self.harness}:{self.tool}" + (f":{command}" if command else "")


def _codex(op: str) -> Callable[[str], dict[str, Any]]:
    body = "@@\n-a\n+b" if op == "Update" else "+b"
    return lambda p: {"input": f"*** Begin Patch\n*** {op} File: {p}\n{body}\n*** End Patch"}


SKINS = [
    FileTool("openhands", "str_replace_editor", lambda p: {"command": "view", "path": p}, "read", folders=True),
    FileTool("openhands", "str_replace_editor", lambda p: {"command": "str_replace", "path": p, "old_str": "a",
                                                           "new_str": "b"}, "read"),
    FileTool("openhands", "str_replace_editor", lambda p: {"command": "create", "path": p, "file_text": "b\n"},
             "write", exists=True),
    FileTool("claude-code", "Read", lambda p: {"file_path": p}, "read"),
    FileTool("claude-code", "Edit", lambda p: {"file_path": p, "old_string": "a", "new_string": "b"}, "read"),
    FileTool("claude-code", "Write", lambda p: {"file_path": p, "content": "b\n"}, "write"),
    FileTool("claude-code", "Grep", lambda p: {"pattern": "secret", "path": p}, "search", folders=True),
    FileTool("codex", "apply_patch", _codex("Update"), "read"),
    FileTool("codex", "apply_patch", _codex("Add"), "write"),
    FileTool("swe-agent", "open", lambda p: {"path": p}, "read"),
    FileTool("swe-agent", "create", lambda p: {"filename": p}, "write", exists=True),
    FileTool("swe-agent", "search_file", lambda p: {"search_term": "secret", "file": p}, "search"),
]
TOOLS = {
    TERMINAL: [FileTool("plain", "read_file", lambda p: {"path": p}, "read"),
               FileTool("plain", "write_file", lambda p: {"path": p, "content": "b\n"}, "write"), *SKINS],
    SWE: [FileTool("plain", "view_file", lambda p: {"path": p}, "read", folders=True),
          FileTool("plain", "str_replace", lambda p: {"path": p, "old": "a", "new": "b"}, "read"),
          FileTool("plain", "create_file", lambda p: {"path": p, "content": "b\n"}, "write"),
          FileTool("plain", "search", lambda p: {"pattern": "secret", "path": p}, "search", folders=True), *SKINS],
}
CASES = [(task, tool) for task, tools in TOOLS.items() for tool in tools]
#: Each skin's shell: the ordinary step after a hostile one.
SHELL = {"plain": ("bash", lambda c: {"command": c}), "openhands": ("execute_bash", lambda c: {"command": c}),
         "claude-code": ("Bash", lambda c: {"command": c}), "swe-agent": ("bash", lambda c: {"command": c}),
         "codex": ("shell", lambda c: {"command": ["bash", "-c", c]})}


def expected(tool: FileTool, hostile: Hostile) -> str | None:
    """The reason the answer must name (a regular expression), or None where the call succeeds."""
    if tool.mode == "write" and tool.exists:  # a create: whatever is there already is refused
        return f"{hostile.write}|already exists" if hostile.write else "already exists"
    if tool.mode == "write":
        return hostile.write
    if hostile.kind == "folder" and tool.folders or hostile.kind == "huge" and tool.mode == "search":
        return None  # a view lists a folder; a search streams any regular file
    return hostile.read


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def hub(security_data_dir: Path) -> AsyncIterator[Hub]:
    async with running_hub(Settings(data_dir=security_data_dir, tasks_dir=REPO_ROOT / "tasks",
                                    families=["terminal", "swe", "office"], store_enabled=False)) as h:
        yield h


def _needs(task_id: str) -> None:
    if task_id.startswith("swe/"):
        from environments.swe.toolchains import status

        if not status("python").present:
            pytest.skip("the python toolchain is missing (envhub setup swe --language python)")


class Episode:
    """One real session through a skin: its steps, checked as they go."""

    def __init__(self, hub: Hub, sid: str, harness: str) -> None:
        self.hub, self.sid, self.harness = hub, sid, harness

    async def step(self, tool: str, arguments: dict[str, Any], limit_s: float = 60) -> StepResult:
        started = time.monotonic()
        r = await self.hub.manager.step(self.sid, StepRequest(action=ToolCall(tool=tool, arguments=arguments)))
        assert time.monotonic() - started < limit_s, f"{tool} took {time.monotonic() - started:.1f}s: a hang"
        return r

    async def sh(self, command: str) -> StepResult:
        tool, args = SHELL[self.harness]
        return await self.step(tool, args(command))

    async def ordinary(self) -> None:
        """An ordinary step works: the session is healthy."""
        r = await self.sh("echo still-fine")
        assert r.failure == FailureClass.ok and "still-fine" in r.observation.text, r.observation.text[-300:]

    async def hostile(self, tool: FileTool, hostile: Hostile, path: str | None = None) -> None:
        r = await self.step(tool.tool, tool.args(path or hostile.path), limit_s=20)
        reason = expected(tool, hostile)
        shown = f"{r.failure.value} {r.observation.text[:300]!r}"
        where = f"{tool.name} on {hostile.kind} ({path or hostile.path}): {shown}"
        if reason is None:
            assert r.failure == FailureClass.ok, where
        else:
            assert r.failure == FailureClass.agent_error and r.failure.trainable, where
            assert r.observation.is_error and re.search(reason, r.observation.text), where
        await self.ordinary()


async def episode(hub: Hub, task_id: str, harness: str, play: Callable[[Episode], Any]) -> None:
    """A session of `task_id` through `harness`: the setup, `play`, then a verify judged as usual."""
    created = await hub.manager.create(ResetRequest(env=task_id.split("/")[0], task_id=task_id, harness=harness))
    ep = Episode(hub, created.session_id, harness)
    try:
        setup = await ep.sh(SETUP + " && ln -s /tmp/fifo fifo-link && echo set-up")
        assert "set-up" in setup.observation.text, setup.observation.text
        await play(ep)
        verdict = await hub.manager.verify(created.session_id)
        assert verdict.failure_class in TRAINABLE, f"verify masked as {verdict.failure_class.value}: {verdict.detail}"
    finally:
        await hub.manager.close(created.session_id)


@pytest.mark.parametrize(("task_id", "tool"), CASES, ids=[f"{t.split('/')[0]}-{f.name}" for t, f in CASES])
async def test_every_hostile_path_is_the_agents_error(hub: Hub, task_id: str, tool: FileTool) -> None:
    """hostile paths: every file tool of each family and skin, on each hostile path, answers the agent's error."""
    _needs(task_id)

    async def play(ep: Episode) -> None:
        for hostile in HOSTILE:
            await ep.hostile(tool, hostile)

    await episode(hub, task_id, tool.harness, play)


#: The same file, named other ways: what the agent sees through each must be the same.
SPELLINGS = {
    "as is": lambda p: p,
    "doubled slashes": lambda p: "/" + p.replace("/", "//"),
    "dot segments": lambda p: p.replace("/", "/./", 1),
    "from the workspace": lambda p: "../.." + p,
}


@settings(max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(task_id=st.sampled_from(list(TOOLS)), data=st.data())
async def test_hostile_paths_in_any_order_and_spelling(hub: Hub, task_id: str, data: st.DataObject) -> None:
    """hostile paths: tools x hostile paths in any order and spelling, in one session: each is the agent's error."""
    _needs(task_id)
    tool = data.draw(st.sampled_from(TOOLS[task_id]), label="tool")
    calls = data.draw(st.lists(st.tuples(st.sampled_from(HOSTILE), st.sampled_from(sorted(SPELLINGS))),
                               min_size=1, max_size=4), label="calls")

    async def play(ep: Episode) -> None:
        for hostile, spelling in calls:
            await ep.hostile(tool, hostile, SPELLINGS[spelling](hostile.path))

    await episode(hub, task_id, tool.harness, play)


async def test_a_symlink_in_the_workspace_is_judged_where_it_leads(hub: Hub) -> None:
    """hostile paths: a workspace symlink to a FIFO is read where it leads, inside the sandbox, and refused."""
    async def play(ep: Episode) -> None:
        await ep.hostile(TOOLS[TERMINAL][0], HOSTILE[[h.kind for h in HOSTILE].index("fifo")], "fifo-link")

    await episode(hub, TERMINAL, "plain", play)


async def test_a_patch_onto_a_hostile_path_is_the_agents_error(hub: Hub) -> None:
    """hostile paths: swe's apply_patch onto a FIFO (and through a planted patch file name) is the agent's error."""
    _needs(SWE)

    async def play(ep: Episode) -> None:
        await ep.sh("mkfifo /tmp/.envhub.patch")  # the fixed name the tool once wrote its patch to
        for target in ("fifo-link", "../../tmp/fifo"):
            r = await ep.step("apply_patch", {"patch": f"--- a/{target}\n+++ b/{target}\n@@ -1 +1 @@\n-a\n+b\n"},
                              limit_s=20)
            assert r.failure == FailureClass.agent_error and "does not apply" in r.observation.text, r
            await ep.ordinary()

    await episode(hub, SWE, "plain", play)


# -- office: tools on the host, over the session's document folder ------------------------------

async def test_office_paths_the_os_refuses_are_the_agents_error(hub: Hub) -> None:
    """hostile paths: office tools on a folder, a FIFO, a file on the way or a name too long: the agent's error."""
    created = await hub.manager.create(ResetRequest(env="office", task_id=OFFICE))
    sid = created.session_id
    m = hub.manager

    async def step(tool: str, **arguments: Any) -> StepResult:
        started = time.monotonic()
        r = await m.step(sid, StepRequest(action=ToolCall(tool=tool, arguments=arguments)))
        assert time.monotonic() - started < 20, f"{tool} took {time.monotonic() - started:.1f}s: a hang"
        return r

    try:
        made = await step("docx_write", path="sub/a.docx", blocks=[{"type": "paragraph", "text": "x"}])
        assert made.failure == FailureClass.ok, made.observation.text
        # A FIFO cannot be made through the tools; a task's files could hold one, and it must not block a read.
        os.mkfifo(m.sessions[sid].env.ws.root / "pipe.xlsx")
        long_name = "x" * 300 + ".docx"
        cases = [
            ("read_document", {"path": "sub"}, "Is a directory"),
            ("copy_file", {"source": "sub/a.docx", "dest": "sub"}, "Is a directory"),
            ("delete_file", {"path": "sub"}, "Is a directory"),
            ("docx_write", {"path": "sub/a.docx/b.docx", "blocks": [{"type": "paragraph", "text": "x"}]},
             "Not a directory"),
            ("read_document", {"path": long_name}, "File name too long"),
            ("docx_write", {"path": long_name, "blocks": [{"type": "paragraph", "text": "x"}]}, "File name too long"),
            ("read_document", {"path": "pipe.xlsx"}, "is a FIFO, not a regular file"),
            ("xlsx_write", {"path": "pipe.xlsx", "sheet": "S", "cells": {"A1": 1}}, "is a FIFO, not a regular file"),
            ("copy_file", {"source": "pipe.xlsx", "dest": "copy.xlsx"}, "is a FIFO, not a regular file"),
            ("read_document", {"path": "/etc/shadow"}, "relative to the workspace"),
            ("read_document", {"path": "../../../proc/self/mem"}, "relative to the workspace"),
        ]
        for tool, args, reason in cases:
            r = await step(tool, **args)
            where = f"{tool} {args}: {r.failure.value} {r.observation.text[:300]!r}"
            assert r.failure == FailureClass.agent_error and re.search(reason, r.observation.text), where
            listed = await step("list_files")
            assert listed.failure == FailureClass.ok and "sub/a.docx" in listed.observation.text, listed
        (m.sessions[sid].env.ws.root / "pipe.xlsx").unlink()  # the task's own file, gone before export
        verdict = await m.verify(sid)
        assert verdict.failure_class in TRAINABLE, verdict.detail
    finally:
        await m.close(sid)


# -- tool limits below the step deadline --------------------------------------------------------

@pytest.fixture(scope="module")
def slow_tasks(security_data_dir: Path) -> Path:
    """swe/python/interval-merge with a step limit of 3 s (and no validation record: a copy)."""
    root = security_data_dir / "slow-tasks"
    task = root / "swe" / "python" / "interval-merge"
    if not task.exists():
        shutil.copytree(REPO_ROOT / "tasks" / SWE, task)
        (task / "validation.json").unlink(missing_ok=True)
        config = (task / "task.yaml").read_text()
        (task / "task.yaml").write_text(config.replace("step_timeout_s: 60", "step_timeout_s: 3"))
        assert "step_timeout_s: 3\n" in (task / "task.yaml").read_text()
    return root


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def slow_hub(security_data_dir: Path, slow_tasks: Path) -> AsyncIterator[Hub]:
    async with running_hub(Settings(data_dir=security_data_dir, tasks_dir=slow_tasks, families=["swe"],
                                    store_enabled=False)) as h:
        yield h


@pytest.mark.parametrize("harness", ["plain", "claude-code"])
async def test_slow_tests_are_the_agents_timeout_not_the_sessions(slow_hub: Hub, harness: str) -> None:
    """tool limits: run_tests and bash whose commands sleep past the step deadline are cut as the agent's timeout."""
    _needs(SWE)
    m = slow_hub.manager
    created = await m.create(ResetRequest(env="swe", task_id=SWE, harness=harness))
    sid = created.session_id
    task = slow_hub.catalog.get(SWE)
    step_limit = task.config.limits.step_timeout_s
    assert step_limit == 3 and task.config.limits.verify_timeout_s > step_limit + 15  # what made it a fault

    async def step(tool: str, **arguments: Any) -> StepResult:
        started = time.monotonic()
        r = await m.step(sid, StepRequest(action=ToolCall(tool=tool, arguments=arguments)))
        took = time.monotonic() - started
        assert took < step_limit + 12, f"{tool} ran {took:.1f}s, past the step limit of {step_limit}s"
        return r

    try:
        shell, args = SHELL[harness]
        # The agent's code sleeps whenever its tests import it.
        r = await step(shell, **args("printf '\\nimport time\\ntime.sleep(60)\\n' >> intervalset/__init__.py "
                                     "&& echo planted"))
        assert "planted" in r.observation.text, r.observation.text
        if harness == "plain":
            r = await step("run_tests")
            assert r.failure == FailureClass.agent_timeout and r.failure.trainable, (r.failure, r.observation.text)
            assert r.observation.timed_out and f"timed out after {step_limit:g}s" in r.observation.text
        long = {"timeout_s": 600} if harness == "plain" else {"timeout": 600_000}
        r = await step(shell, **args("sleep 60"), **long)
        assert r.failure == FailureClass.agent_timeout and r.failure.trainable, (r.failure, r.observation.text)
        # The session is still usable: the agent undoes its sleep and is judged as usual.
        r = await step(shell, **args("git checkout -- . && echo restored"))
        assert r.failure == FailureClass.ok and "restored" in r.observation.text, r.observation.text
        verdict = await m.verify(sid)
        assert verdict.failure_class == FailureClass.ok and verdict.reward == 0.0, verdict.detail
    finally:
        await m.close(sid)
