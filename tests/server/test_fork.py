"""Forking a live episode (`POST /v1/sessions/{id}/fork`, the socket's `fork` op, `session.fork(n)`):
each fork's state is a copy of the source's at its current step, and nothing written in one is ever
seen in another or in the source; the step log is carried, so a fork is judged on its whole path."""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from envhub.client import EnvClient
from envhub.config import get_settings
from envhub.core import sessions
from envhub.core.hub import Hub
from envhub.errors import EnvError, EpisodeOver, NotFound, NotSupported, Unavailable
from envhub.sandbox import local
from envhub.sandbox.base import SandboxLimits, SandboxSpec
from envhub.sandbox.local import LocalBackend
from envhub.shell_env import ReplayFirst
from envhub.spec import ForkRequest, Observation, ResetRequest, StepRequest
from environments.echo import EchoEnvironment
from tests.conftest import make_settings, running_hub

TERMINAL = "terminal/count-error-lines"


def bash(command: str) -> StepRequest:
    return StepRequest.model_validate({"action": {"tool": "bash", "arguments": {"command": command}}})


def echo(message: str) -> StepRequest:
    return StepRequest.model_validate({"action": {"tool": "echo", "arguments": {"message": message}}})


async def run(hub: Hub, sid: str, command: str) -> str:
    result = await hub.manager.step(sid, bash(command))
    assert result.observation.data["exit_code"] == 0, result.observation.text
    return result.observation.text.rsplit("\n[exit code", 1)[0].rstrip("\n")


async def act(hub: Hub, sid: str, tool: str, **arguments: Any) -> Observation:
    """One call through the family's own tool, which must succeed."""
    result = await hub.manager.step(sid, StepRequest.model_validate({"action": {"tool": tool, "arguments": arguments}}))
    assert result.failure.value == "ok", result.observation.text
    return result.observation


@dataclass(frozen=True)
class Probe:
    """How a test writes a mark into a numbered slot of one family's episode state and reads it back:
    through the family's tools, and from the exported state where exporting is cheap."""

    env: str
    task_id: str
    write: Callable[[Hub, str, int, str], Awaitable[object]]
    read: Callable[[Hub, str, int], Awaitable[str | None]]  # the mark in the slot; None: none
    exported: Callable[[Path, int], str | None] | None = None


# echo: slot k is the last message said as "k=mark" (it has no tool that reads: its state is read)
async def echo_write(hub: Hub, sid: str, slot: int, mark: str) -> None:
    await act(hub, sid, "echo", message=f"{slot}={mark}")


def echoed(messages: list[str], slot: int) -> str | None:
    return next((m.split("=", 1)[1] for m in reversed(messages) if m.startswith(f"{slot}=")), None)


async def echo_read(hub: Hub, sid: str, slot: int) -> str | None:
    return echoed(hub.manager.get(sid).env.messages, slot)  # type: ignore[attr-defined]


# terminal and swe: slot k is the file /workspace/slot<k>.txt
async def shell_write(hub: Hub, sid: str, slot: int, mark: str) -> None:
    await run(hub, sid, f"echo {mark} > /workspace/slot{slot}.txt")


async def swe_write(hub: Hub, sid: str, slot: int, mark: str) -> None:
    await act(hub, sid, "create_file", path=f"slot{slot}.txt", content=mark)


async def shell_read(hub: Hub, sid: str, slot: int) -> str | None:
    out = await run(hub, sid, f"cat /workspace/slot{slot}.txt 2>/dev/null || echo '(none)'")
    return None if out == "(none)" else out


def shell_exported(dest: Path, slot: int) -> str | None:
    path = dest / f"slot{slot}.txt"
    return path.read_text().strip() if path.is_file() else None


# db: slot k is customer k+1's email (a write tool of the task's domain, read back with its look-up)
def marked(email: str) -> str | None:
    return email.removesuffix("@mark.test") if email.endswith("@mark.test") else None


async def db_write(hub: Hub, sid: str, slot: int, mark: str) -> None:
    await act(hub, sid, "update_customer", customer_id=slot + 1, email=f"{mark}@mark.test")


async def db_read(hub: Hub, sid: str, slot: int) -> str | None:
    return marked((await act(hub, sid, "get_customer", customer_id=slot + 1)).data["email"])


def db_exported(dest: Path, slot: int) -> str | None:
    rows = json.loads((dest / "final" / "customers.json").read_text())
    return marked(next(c["email"] for c in rows if c["id"] == slot + 1))


# office: slot k is cell A<k+1> of a sheet of the task's workbook (its export recalculates: not cheap)
async def office_write(hub: Hub, sid: str, slot: int, mark: str) -> None:
    await act(hub, sid, "xlsx_write", path="update.xlsx", sheet="Marks", cells={f"A{slot + 1}": mark})


async def office_read(hub: Hub, sid: str, slot: int) -> str | None:
    seen = await act(hub, sid, "read_document", path="update.xlsx", sheet="Marks", range=f"A{slot + 1}")
    return next((c["value"] for row in seen.data["sheets"]["Marks"]["cells"] for c in row), None)


PROBES = [
    Probe("echo", "echo/say-done", echo_write, echo_read,
          lambda dest, slot: echoed(json.loads((dest / "messages.json").read_text()), slot)),
    Probe("terminal", TERMINAL, shell_write, shell_read, shell_exported),
    Probe("swe", "swe/python/interval-merge", swe_write, shell_read, shell_exported),
    Probe("db", "db/retail/update-email-001", db_write, db_read, db_exported),
    Probe("office", "office/banking/t09-update", office_write, office_read),
]


@pytest.mark.parametrize("probe", PROBES, ids=[p.env for p in PROBES])
async def test_a_write_in_one_fork_is_never_seen_in_another_fork_or_the_source(probe: Probe, tmp_path: Path) -> None:
    async with running_hub(make_settings(families=[probe.env])) as hub:
        source = (await hub.manager.create(ResetRequest(env=probe.env, task_id=probe.task_id))).session_id
        sessions = [source]
        try:
            await probe.write(hub, source, 0, "base")
            forks = await hub.manager.fork(source, ForkRequest(n=2))
            sessions += [f.session_id for f in forks]
            for f in forks:
                assert f.observation.data["forked_from"] == source and f.observation.data["at_step"] == 1
                assert await probe.read(hub, f.session_id, 0) == "base"  # the copy has the source's state
            rng = random.Random(7)
            marks: dict[str, dict[int, str]] = {sid: {0: "base"} for sid in sessions}
            writers = sessions * 2
            rng.shuffle(writers)
            for i, sid in enumerate(writers):  # writes in any order, each to one session only
                slot = rng.randrange(3)
                await probe.write(hub, sid, slot, f"w{i}")
                marks[sid][slot] = f"w{i}"
            for sid in sessions:
                assert [await probe.read(hub, sid, slot) for slot in range(3)] == [marks[sid].get(s) for s in range(3)]
            if probe.exported is not None:
                for sid in sessions:
                    await hub.manager.get(sid).env.export_state(tmp_path / sid)
                    assert [probe.exported(tmp_path / sid, slot) for slot in range(3)] == [
                        marks[sid].get(s) for s in range(3)], sid
        finally:
            for sid in sessions:
                await hub.manager.close(sid)


async def test_a_forks_shell_goes_on_where_the_sources_was(hub: Hub) -> None:
    source = (await hub.manager.create(ResetRequest(env="terminal", task_id=TERMINAL))).session_id
    forks: list[str] = []
    try:
        await run(hub, source, "mkdir -p work && cd work && export MARK=source-mark && set -o noclobber")
        forks = [f.session_id for f in await hub.manager.fork(source, ForkRequest(n=2))]
        for sid in forks:  # directory, exported variables, options
            assert await run(hub, sid, 'pwd; echo "$MARK"; set -o | grep noclobber') == (
                "/workspace/work\nsource-mark\nnoclobber      \ton")
    finally:
        for sid in [source, *forks]:
            await hub.manager.close(sid)


async def test_n_forks_copy_the_workspace_n_times_not_n_plus_one(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    """The source's workspace is copied once per fork: the first fork's sandbox takes the copy
    made under the source's lock whole (a rename), the others copy it; none copies it twice."""
    copies: list[str] = []
    real = local.copy_tree

    async def counted(src: Path, dest: Path, **kw: Any) -> None:
        copies.append(Path(src).name)
        await real(src, dest, **kw)

    monkeypatch.setattr(local, "copy_tree", counted)
    monkeypatch.setattr(sessions, "copy_tree", counted, raising=False)
    source = (await hub.manager.create(ResetRequest(env="terminal", task_id=TERMINAL))).session_id
    forks: list[str] = []
    try:
        await run(hub, source, "head -c 100000 /dev/urandom > big.bin && sha256sum big.bin > sum.txt")
        copies.clear()
        forks = [f.session_id for f in await hub.manager.fork(source, ForkRequest(n=3))]
        assert len(copies) == 3, copies
        for sid in [source, *forks]:
            assert await run(hub, sid, "sha256sum -c sum.txt") == "big.bin: OK"
    finally:
        for sid in [source, *forks]:
            await hub.manager.close(sid)


async def test_a_fork_carries_the_step_log_and_is_judged_on_its_whole_path(hub: Hub) -> None:
    source = (await hub.manager.create(ResetRequest(env="echo", task_id="echo/say-done"))).session_id
    forks: list[str] = []
    try:
        await hub.manager.step(source, echo("done"))
        forks = [f.session_id for f in await hub.manager.fork(source, ForkRequest(n=2))]
        first, second = (hub.manager.get(f) for f in forks)
        assert first.step_count == 1
        assert [e.action for e in first.log] == [e.action for e in hub.manager.get(source).log]
        assert (first.header.parent_id, first.header.forked_at_step) == (source, 1)
        await hub.manager.step(forks[0], echo("more"))
        assert (first.step_count, second.step_count, hub.manager.get(source).step_count) == (2, 1, 1)
        assert second.env.messages == ["done"] and first.env.messages == ["done", "more"]  # type: ignore[attr-defined]
        verdict = await hub.manager.verify(forks[1])  # "done" was said before the fork: the path passes
        assert verdict.passed and verdict.reward == 1.0
        assert not hub.manager.get(source).result  # the source is untouched by its fork's verify
    finally:
        for sid in [source, *forks]:
            await hub.manager.close(sid)


async def test_a_finished_episode_or_someone_elses_cannot_be_forked(hub: Hub) -> None:
    source = (await hub.manager.create(ResetRequest(env="echo", task_id="echo/say-done"))).session_id
    try:
        await hub.manager.verify(source)
        with pytest.raises(EpisodeOver):
            await hub.manager.fork(source, ForkRequest())
    finally:
        await hub.manager.close(source)
    with pytest.raises(NotFound):
        await hub.manager.fork(source, ForkRequest())
    assert hub.manager.active == 0  # nothing reserved was left behind


def test_a_fork_belongs_to_its_caller_and_another_caller_gets_404(in_process) -> None:
    with EnvClient(transport=in_process.transport()) as mine, EnvClient(transport=in_process.transport()) as other:
        with mine.session("echo", "echo/say-done") as session:
            session.step("echo", message="hello")
            forks = session.fork(2)
            try:
                assert len({f.id for f in forks} | {session.id}) == 3
                assert forks[0].state().step_count == 1
                with pytest.raises(NotFound):
                    other.fork(session.id)
                with pytest.raises(NotFound):
                    other.step(forks[0].id, "echo", message="x")
            finally:
                for f in forks:
                    mine.close_session(f.id)


async def test_forks_count_against_capacity() -> None:
    async with running_hub(make_settings(families=["echo"], max_sessions=3)) as hub:
        source = (await hub.manager.create(ResetRequest(env="echo", task_id="echo/say-done"))).session_id
        with pytest.raises(Unavailable, match="at capacity"):
            await hub.manager.fork(source, ForkRequest(n=3))
        assert hub.manager.active == 1
        assert len(await hub.manager.fork(source, ForkRequest(n=2))) == 2
        assert hub.manager.active == 3


@pytest.mark.usefixtures("echo_cannot_copy")
async def test_a_family_that_cannot_copy_its_live_state_says_so(hub: Hub) -> None:
    source = (await hub.manager.create(ResetRequest(env="echo", task_id="echo/say-done"))).session_id
    with pytest.raises(NotSupported, match="cannot copy a live episode"):
        await hub.manager.fork(source, ForkRequest())
    assert hub.manager.active == 1
    assert (await hub.manager.step(source, echo("still"))).failure.value == "ok"  # still served
    await hub.manager.close(source)


async def test_a_fork_says_which_running_processes_it_did_not_carry(hub: Hub) -> None:
    source = (await hub.manager.create(ResetRequest(env="terminal", task_id=TERMINAL))).session_id
    forks: list[str] = []
    try:
        (quiet,) = await hub.manager.fork(source, ForkRequest())
        forks.append(quiet.session_id)
        assert quiet.observation.data["processes_not_carried"] == [], quiet.observation.text
        await run(hub, source, "(sleep 300 &) ; true")
        (busy,) = await hub.manager.fork(source, ForkRequest())
        forks.append(busy.session_id)
        assert [p.split(" ", 1)[1].strip() for p in busy.observation.data["processes_not_carried"]] == ["sleep 300"]
        assert "sleep" not in await run(hub, busy.session_id, "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '")
    finally:
        for sid in [source, *forks]:
            await hub.manager.close(sid)


def test_the_session_socket_forks_and_snapshots_too() -> None:
    from fastapi.testclient import TestClient

    from envhub.server.app import create_app

    with TestClient(create_app(make_settings(families=["echo"]))) as client, \
            client.websocket_connect("/v1/sessions/ws") as ws:
        def ask(frame: dict) -> dict:
            ws.send_json(frame)
            return ws.receive_json()

        assert ask({"op": "reset", "id": 1, "data": {"env": "echo", "task_id": "echo/say-done"}})["ok"]
        assert ask({"op": "step", "id": 2, "data": {"action": {"tool": "echo", "arguments": {"message": "a"}}}})["ok"]
        forked = ask({"op": "fork", "id": 3, "data": {"n": 2}})
        assert forked["ok"] and forked["op"] == "fork", forked
        ids = [s["session_id"] for s in forked["data"]["sessions"]]
        assert len(set(ids)) == 2 and all(s["observation"]["data"]["at_step"] == 1 for s in forked["data"]["sessions"])
        state = ask({"op": "state", "id": 4, "session_id": ids[0]})
        assert state["ok"] and state["data"]["step_count"] == 1
        refused = ask({"op": "fork", "id": 5, "data": {"n": 0}})
        assert refused["ok"] is False and refused["error"]["status"] in (400, 422), refused
        kept = ask({"op": "snapshot", "id": 6, "session_id": ids[1]})
        assert kept["ok"] and kept["data"]["step"] == 1 and kept["data"]["snapshot_id"].startswith("snap-"), kept
        started = ask({"op": "reset", "id": 7, "data": {"env": "echo", "from_snapshot": kept["data"]["snapshot_id"]}})
        assert started["ok"] and started["data"]["observation"]["data"]["at_step"] == 1, started
        client.delete(f"/v1/snapshots/{kept['data']['snapshot_id']}")


async def test_a_fork_whose_copy_fails_to_start_leaves_no_session_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    """The n copies start side by side; when one fails the fork fails whole: the copies that did
    start are closed and the room they took is given back."""
    restore, calls = EchoEnvironment.restore, []

    async def second_fails(self: EchoEnvironment, **kw):  # noqa: ANN003, ANN202
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the copy's start broke")
        return await restore(self, **kw)

    monkeypatch.setattr(EchoEnvironment, "restore", second_fails)
    async with running_hub(make_settings(families=["echo"], max_sessions=4)) as hub:
        source = (await hub.manager.create(ResetRequest(env="echo", task_id="echo/say-done"))).session_id
        with pytest.raises(EnvError, match="a fork of .* failed"):
            await hub.manager.fork(source, ForkRequest(n=3))
        assert len(calls) == 3 and hub.manager.active == 1 and list(hub.manager.sessions) == [source]
        assert len(await hub.manager.fork(source, ForkRequest(n=3))) == 3  # all the room is back


async def test_a_copys_shell_takes_the_state_before_its_first_command_and_a_dead_one_is_env_error() -> None:
    """A fork answers before its shell has taken the source's state (as a reset answers before its
    shell is up): the copy's first command runs after the replay, and a shell that dies taking it
    is the environment's fault, never the agent's (`SandboxGone` is an agent error elsewhere)."""
    backend = LocalBackend(get_settings().data_dir / "sandboxes")
    spec = SandboxSpec(template=None, limits=SandboxLimits(processes=64, memory_mb=512))
    copy = ReplayFirst(await backend.start(spec), "cd /tmp\nexport MARK=m", timeout_s=30)
    try:
        assert (await copy.run('pwd; echo "$MARK"', timeout_s=10)).output.strip() == "/tmp\nm"
        assert (await copy.run("export MARK=n; echo $MARK", timeout_s=10)).output.strip() == "n"  # replayed once
        assert (await copy.run("echo $MARK", timeout_s=10)).output.strip() == "n"
    finally:
        await copy.close()
    dead = ReplayFirst(await backend.start(spec), "exit 3", timeout_s=30)
    try:
        with pytest.raises(EnvError, match="did not take the source's state"):
            await dead.run("echo hi", timeout_s=10)
    finally:
        await dead.close()
