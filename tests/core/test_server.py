"""The HTTP server end to end: the conformance suite, capacity, faults, clients, OpenEnv's client."""

import asyncio
import os
import time
import signal

import httpx
import pytest

from envhub.client import AsyncEnvClient, EnvClient
from envhub.conformance import ConformanceSuite
from envhub.errors import NotFound, Unavailable
from envhub.server.thread import serve_in_thread

from tests.conftest import make_settings

TERMINAL_TASK = "terminal/count-error-lines"


def test_conformance_suite_passes_on_echo(live_server):
    outcomes = ConformanceSuite(live_server.url, env="echo", task_id="echo/say-done").run()
    assert [o for o in outcomes if not o.ok] == []
    assert len(outcomes) >= 9


def test_conformance_suite_passes_on_terminal(live_server):
    outcomes = ConformanceSuite(live_server.url, env="terminal", task_id=TERMINAL_TASK,
                                action={"tool": "bash", "arguments": {"command": "ls"}}).run()
    assert [o for o in outcomes if not o.ok] == []


def test_conformance_suite_can_fail():
    """Against something that is not an envhub server every check fails."""
    outcomes = ConformanceSuite("http://127.0.0.1:9", env="echo", timeout=2).run()
    assert outcomes and not any(o.ok for o in outcomes)


def test_capacity_refuses_with_503_before_taking_resources():
    with serve_in_thread(make_settings(families=["echo"], max_sessions=1)) as server:
        http = httpx.Client(base_url=server.url)
        first = http.post("/v1/sessions", json={"env": "echo"})
        assert first.status_code == 201
        http.headers["Authorization"] = f"Bearer {first.json()['client_token']}"  # the session's owner from now on
        refused = http.post("/v1/sessions", json={"env": "echo"})
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert refused.json()["failure_class"] == "unavailable" and refused.json()["retryable"] is True
        assert http.get("/capacity").json() == {"protocol": "envhub/1", "max_sessions": 1, "active_sessions": 1,
                                                "free": 0}
        assert http.get("/ready").status_code == 503
        http.delete(f"/v1/sessions/{first.json()['session_id']}")
        assert http.post("/v1/sessions", json={"env": "echo"}).status_code == 201


def test_idle_sessions_are_reaped():
    with serve_in_thread(make_settings(families=["echo"], reap_interval_s=0.2)) as server:
        http = httpx.Client(base_url=server.url, headers={"Authorization": "Bearer reaper-test-client-token"})
        sid = http.post("/v1/sessions", json={"env": "echo", "lease_s": 0.3}).json()["session_id"]
        assert http.get(f"/v1/sessions/{sid}").status_code == 200
        for _ in range(50):  # poll capacity: a GET on the session itself would renew its lease
            if http.get("/capacity").json()["active_sessions"] == 0:
                break
            time.sleep(0.1)
        assert http.get(f"/v1/sessions/{sid}").status_code == 404


def test_sandbox_killed_mid_episode_is_env_error_and_others_keep_working(live_server):
    with EnvClient(live_server.url) as client:
        with client.session("terminal", task_id=TERMINAL_TASK) as victim, \
                client.session("terminal", task_id=TERMINAL_TASK) as bystander:
            victim.step("bash", command="echo hello")
            sandbox = live_server.hub.manager.get(victim.id).env.sandbox
            os.kill(sandbox._proc.pid, signal.SIGKILL)
            # The kill is seen when the server's loop reaps bwrap; until then (a moment, longer under
            # load) the shell, which dies with its parent asynchronously, may still answer.
            for _ in range(200):
                if sandbox._proc.returncode is not None:
                    break
                time.sleep(0.05)
            broken = victim.step("bash", command="echo again")
            assert broken.failure.value == "env_error" and broken.trainable is False and broken.retryable
            verdict = victim.verify()
            assert verdict.failure_class.value == "env_error" and not verdict.trainable
            ok = bystander.step("bash", command="echo fine")
            assert ok.failure.value == "ok" and "fine" in ok.observation.text


def test_terminal_command_timeout_and_bad_arguments(live_server):
    with EnvClient(live_server.url) as client, client.session("terminal", task_id=TERMINAL_TASK) as s:
        slow = s.step("bash", command="sleep 100", timeout_s=1)
        assert slow.failure.value == "agent_timeout" and slow.observation.data["timed_out"]
        bad = s.step("bash", cmd="ls")
        assert bad.failure.value == "agent_error" and "command" in bad.observation.text
        sneaky = s.step("bash", command="ls /verify /tasks 2>&1; find / -name 'solve.sh' 2>/dev/null | head -1")
        assert "solve.sh" not in sneaky.observation.text.replace("find / -name", "")
        alive = s.step("bash", command="echo ok")
        assert alive.failure.value == "ok"


def test_sync_client_raises_typed_errors(live_server):
    with EnvClient(live_server.url, retries=0) as client:
        with pytest.raises(NotFound):
            client.step("no-such-session", "echo", message="x")
        with pytest.raises(NotFound, match="did you mean"):
            client.reset("ecoh")


async def test_async_client_runs_episodes_concurrently(live_server):
    async with AsyncEnvClient(live_server.url) as client:
        async def episode(i: int) -> float:
            async with client.session("echo", task_id="echo/say-done") as s:
                step = await s.step("echo", message="done" if i % 2 == 0 else "nope")
                assert step.observation.text in ("done", "nope")
                return (await s.verify()).reward

        rewards = await asyncio.gather(*(episode(i) for i in range(8)))
        assert rewards == [1.0, 0.0] * 4
        with pytest.raises(NotFound):
            await client.state("missing")


def test_client_retries_capacity_refusals():
    with serve_in_thread(make_settings(families=["echo"], max_sessions=1)) as server:
        with EnvClient(server.url, retries=0) as client:
            held = client.reset("echo")
            with pytest.raises(Unavailable):
                client.reset("echo")
            client.close_session(held.session_id)


def test_openenv_client_completes_an_episode(live_server):
    openenv = pytest.importorskip("openenv.core.generic_client")
    with openenv.GenericEnvClient(base_url=f"{live_server.url}/envs/echo").sync() as env:
        first = env.reset(task_id="echo/say-done")
        assert first.done is False and "done" in first.observation["text"]
        step = env.step({"tool": "echo", "arguments": {"message": "done"}})
        assert step.observation["text"] == "done" and step.done is False
        assert env.state()["step_count"] == 1
        final = env.step({"tool": "submit"})
        assert final.done is True and final.reward == 1.0
