"""The twin clients, method by method, in-process: the same test runs `EnvClient` and `AsyncEnvClient`
against the app through `envhub.client.asgi.InProcess` (no socket)."""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envhub.client import AsyncEnvClient, AsyncSession, EnvClient, Session
from envhub.client.asgi import InProcess
from envhub.errors import EpisodeOver, NotFound, RequestError
from envhub.server.app import create_app
from tests.conftest import echo_with_step_budget, make_settings

BASE = "http://envhub.test"
TASK = "echo/say-done"


class Twin:
    """One client of either kind, called the same way: the async one's calls are run to completion."""

    def __init__(self, kind: str, app: InProcess) -> None:
        self.kind = kind
        if kind == "sync":
            self.client: Any = EnvClient(BASE, transport=app.transport(), retries=0)
        else:
            self.loop = asyncio.new_event_loop()
            self.client = AsyncEnvClient(BASE, transport=app.async_transport(), retries=0)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)
        if self.kind == "sync":
            return method
        return lambda *args, **kwargs: self.loop.run_until_complete(method(*args, **kwargs))

    def close(self) -> None:
        if self.kind == "sync":
            self.client.close()
        else:
            self.loop.run_until_complete(self.client.aclose())
            self.loop.close()


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest, in_process: InProcess) -> Iterator[Twin]:
    t = Twin(request.param, in_process)
    yield t
    t.close()


def _public(cls: type) -> dict[str, inspect.Signature]:
    return {n: inspect.signature(f) for n, f in vars(cls).items() if callable(f) and not n.startswith("_")}


@pytest.mark.parametrize(("sync_cls", "async_cls"), [(EnvClient, AsyncEnvClient), (Session, AsyncSession)])
def test_the_twins_have_the_same_methods_and_parameters(sync_cls: type, async_cls: type) -> None:
    sync, asyn = _public(sync_cls), _public(async_cls)
    sync.pop("close", None), asyn.pop("aclose", None)
    assert sync.keys() == asyn.keys()
    for name, sig in sync.items():
        assert list(sig.parameters) == list(asyn[name].parameters), name
        assert inspect.iscoroutinefunction(getattr(async_cls, name)) or name == "session", name


def test_registry_calls(twin: Twin) -> None:
    assert {e["name"] for e in twin.envs()} == {"echo", "terminal"}
    tasks = twin.tasks(env="echo")
    assert TASK in {t["id"] for t in tasks} and {t["env"] for t in tasks} == {"echo"}
    assert twin.tasks(env="echo", q="no-such-task-anywhere") == []
    assert twin.health()["status"] == "healthy"


def test_an_episode_call_by_call(twin: Twin, in_process: InProcess) -> None:
    created = twin.reset("echo", task_id=TASK, policy_version=f"twin-{twin.kind}")
    sid = created.session_id
    assert created.task.id == TASK and {t.name for t in created.tools} >= {"echo"}
    step = twin.step(sid, "echo", message="done")
    assert step.step == 1 and step.failure == "ok"
    state = twin.state(sid)
    assert state.step_count == 1 and not state.verified
    verdict = twin.verify(sid)
    assert verdict.passed and verdict.reward == 1.0 and twin.state(sid).verified
    twin.close_session(sid)
    with pytest.raises(NotFound):
        twin.state(sid)
    twin.close_session(sid)  # closing twice is fine

    hub = in_process.app.state.hub
    assert in_process.run(hub.store.writer.flush())
    listed = twin.episodes(policy_version=f"twin-{twin.kind}")
    assert listed["total"] == 1 and listed["episodes"][0]["id"] == sid
    detail = twin.episode(sid, step_limit=1)
    assert detail["reward"] == 1.0 and detail["steps_total"] == 1
    assert detail["steps"][0]["arguments"] == {"message": "done"} and detail["steps"][0]["tool"] == "echo"


def test_errors_come_back_as_envhub_errors(twin: Twin) -> None:
    with pytest.raises(NotFound):
        twin.step("no-such-session", "echo", message="x")
    with pytest.raises(NotFound):
        twin.reset("no-such-env")
    with pytest.raises(RequestError):
        twin.reset("echo", task_id="terminal/count-error-lines")


def test_the_session_block_closes_its_episode(in_process: InProcess) -> None:
    with EnvClient(BASE, transport=in_process.transport()) as client:
        with client.session("echo", task_id=TASK) as s:
            assert s.step("echo", message="done").step == 1 and s.state().step_count == 1
            assert s.verify().passed
        with pytest.raises(NotFound):
            client.state(s.id)

    async def twin() -> None:
        async with AsyncEnvClient(BASE, transport=in_process.async_transport()) as client:
            async with client.session("echo", task_id=TASK) as s:
                assert (await s.step("echo", message="done")).step == 1 and (await s.state()).step_count == 1
                assert (await s.verify()).passed
            with pytest.raises(NotFound):
                await client.state(s.id)

    asyncio.run(twin())


def test_a_run_call_by_call(twin: Twin, in_process: InProcess) -> None:
    """Both twins create a run, name it at reset, report a step and read the run; another client's
    credential is told the run does not exist."""
    run_id = f"twin-run-{twin.kind}-{uuid.uuid4().hex[:8]}"
    made = twin.create_run(run_id, {"lr": 1e-5})
    assert (made["id"], made["config"], made["steps"]) == (run_id, {"lr": 1e-5}, 0)
    sid = twin.reset("echo", task_id=TASK, policy_version="7", run_id=run_id).session_id
    twin.step(sid, "echo", message="done")
    twin.verify(sid)
    twin.close_session(sid)
    assert in_process.run(in_process.app.state.hub.store.writer.flush())
    assert twin.report_step(run_id, 1, {"loss": 0.25, "staleness": {"0": 2}}, policy_version="8")["step"] == 1
    run = twin.get_run(run_id)
    assert [(s["step"], s["policy_version"], s["figures"]) for s in run["step_reports"]] == [
        (1, "8", {"loss": 0.25, "staleness": {"0": 2.0}})]
    assert run["figures"]["episodes"] == 1 and run["figures"]["reward_by_policy"] == [
        {"policy_version": "7", "n": 1, "mean": 1.0, "ci95": None}]
    assert [r["id"] for r in twin.list_runs(limit=1)["runs"]] == [run_id]
    assert twin.episodes(run_id=run_id)["episodes"][0]["id"] == sid
    other = Twin(twin.kind, in_process)
    try:
        with pytest.raises(NotFound, match="no run"):
            other.get_run(run_id)
        assert other.list_runs()["total"] == 0
    finally:
        other.close()


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_both_twins_tell_a_budget_cut_from_a_terminal_state(kind: str, tmp_path: Path) -> None:
    """A step past the task's step budget comes back `truncated`, not `terminated`, in both twins'
    `StepResult` and `SessionState`; verify makes the episode terminated, and a step after it is refused."""
    settings = make_settings(families=["echo"], tasks_dir=echo_with_step_budget(tmp_path, 1), store_enabled=False)
    with InProcess(create_app(settings)) as app:
        twin = Twin(kind, app)
        try:
            sid = twin.reset("echo", task_id=TASK).session_id
            ordinary, cut = twin.step(sid, "echo", message="a"), twin.step(sid, "echo", message="b")
            assert (ordinary.terminated, ordinary.truncated, ordinary.done) == (False, False, False)
            assert (cut.terminated, cut.truncated, cut.done) == (False, True, True) and cut.failure == "agent_timeout"
            state = twin.state(sid)
            assert (state.terminated, state.truncated, state.done) == (False, True, True)
            twin.verify(sid)
            assert twin.state(sid).terminated
            with pytest.raises(EpisodeOver):
                twin.step(sid, "echo", message="c")
        finally:
            twin.close()


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_an_unreachable_server_is_one_error_type_from_both_twins(kind: str) -> None:
    """Both twins raise `ConnectionFailed` (an `Unavailable`, retryable) for their transport's
    fault, httpx's or aiohttp's, with it as the cause: a caller catches one type either way."""
    import socket

    from envhub.errors import ConnectionFailed, EnvhubError

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    if kind == "sync":
        with EnvClient(url, retries=1) as client, pytest.raises(ConnectionFailed) as caught:
            client.health()
    else:
        async def call() -> None:
            client = AsyncEnvClient(url, retries=1)
            try:
                await client.health()
            finally:
                await client.aclose()
        with pytest.raises(ConnectionFailed) as caught:
            asyncio.run(call())
    err = caught.value
    assert isinstance(err, EnvhubError) and err.retryable and err.failure_class.value == "unavailable"
    assert err.detail.startswith(f"cannot reach {url}/health") and err.__cause__ is not None
    assert not isinstance(err.__cause__, EnvhubError)
