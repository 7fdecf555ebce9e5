"""Two views of a verdict (DESIGN.md §5.6): the trainer's verify answer keeps every check message;
what an agent can reach (MCP's `verify` tool, a skin's submit, OpenEnv's submit) says the reward
and which checks held, never a message, which quotes the hidden expected value.

The episode is real: terminal/count-error-lines answered wrong, whose failed check's message is
`assert '1' == '270'` (270 being the hidden count), through a real server."""

from __future__ import annotations

import json
import secrets

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from envhub import harness
from envhub.client import AsyncEnvClient
from envhub.errors import FailureClass
from envhub.server.thread import ThreadedServer
from envhub.spec import CheckResult, ToolCall, VerifierRef, VerifyResult

TASK = "terminal/count-error-lines"
WRONG = "echo 1 > error_count.txt"  # the count is 270
HIDDEN = "270"
#: What the agent may see of this verdict, whatever the surface.
SEEN = {"reward": 0.0, "passed": False, "failure_class": "ok",
        "checks": [{"id": "count-correct", "kind": "hard", "passed": False},
                   {"id": "log-untouched", "kind": "collateral", "passed": True}]}
#: The skins that can present terminal, and their own way to say "done" (None: they have none).
SKINS = {"plain": None, "mcp": None, "openhands": "finish", "swe-agent": "submit", "claude-code": None,
         "codex": None}


def trainers_verdict(server: ThreadedServer, sid: str, token: str) -> str:
    """The trainer's REST verify answer, as raw JSON; it must carry the hidden value in its message."""
    r = httpx.post(f"{server.url}/v1/sessions/{sid}/verify", json={}, headers={"Authorization": f"Bearer {token}"})
    r.raise_for_status()
    failed = [c for c in r.json()["checks"] if not c["passed"]]
    assert [c["id"] for c in failed] == ["count-correct"] and f"'{HIDDEN}'" in failed[0]["message"], r.text
    return failed[0]["message"]


def assert_hidden_from_agent(seen: str, message: str) -> None:
    assert HIDDEN not in seen, seen
    assert message not in seen and "AssertionError" not in seen, seen


def test_the_agents_view_keeps_reward_and_check_outcomes_only() -> None:
    full = VerifyResult(reward=0.0, passed=False, failure_class=FailureClass.ok, trainable=True, retryable=False,
                        detail="verifier output (tail): expected 270", verifier=VerifierRef(id=TASK, sha256="ab" * 32),
                        timings={"total_s": 0.3},
                        checks=[CheckResult(id="count-correct", passed=False, score=0.0,
                                            message="AssertionError: assert '1' == '270'"),
                                CheckResult(id="log-untouched", kind="collateral", passed=True, score=1.0)])
    seen = full.for_agent()
    assert seen.model_dump(mode="json") == SEEN
    assert seen.text() == "reward 0 (failed; ok); failed: count-correct (hard); passed: log-untouched (collateral)"
    assert_hidden_from_agent(seen.model_dump_json() + seen.text(), full.checks[0].message)


@pytest.mark.parametrize("skin", sorted(SKINS))
async def test_mcp_verify_and_a_skins_submit_show_no_check_message(live_server: ThreadedServer, skin: str) -> None:
    assert set(SKINS) <= set(harness.registered())
    async with AsyncEnvClient(live_server.url) as envhub:
        created = await envhub.reset("terminal", TASK, harness=skin)
    sid, token = created.session_id, created.client_token
    assert token is not None
    shell = live_server.hub.manager.sessions[sid].skin
    [call] = shell.express(ToolCall(tool="bash", arguments={"command": WRONG}), {})
    seen: list[str] = []
    async with streamablehttp_client(f"{live_server.url}/v1/sessions/{sid}/mcp",
                                     headers={"Authorization": f"Bearer {token}"}) as (read, write, _), \
            ClientSession(read, write) as mcp:
        await mcp.initialize()
        assert not (await mcp.call_tool(call.tool, call.arguments)).isError
        if SKINS[skin]:
            done = await mcp.call_tool(SKINS[skin], {})
            assert not done.isError, done
            seen.append(done.model_dump_json())
        verdict = await mcp.call_tool("verify", {})
    seen.append(verdict.model_dump_json())
    assert_hidden_from_agent("\n".join(seen), trainers_verdict(live_server, sid, token))
    assert verdict.structuredContent == SEEN
    assert verdict.content[0].text.startswith("reward 0 (failed; ok); failed: count-correct (hard)")


def test_openenv_submit_shows_no_check_message_over_its_client(live_server: ThreadedServer) -> None:
    """OpenEnv's own client (WebSocket): submit's observation and metadata are the agent's view; the
    trainer reads the whole verdict over REST for the same session with the same credentials."""
    openenv = pytest.importorskip("openenv.core.generic_client")
    token = secrets.token_urlsafe(24)
    with openenv.GenericEnvClient(base_url=f"{live_server.url}/envs/terminal",
                                  headers={"Authorization": f"Bearer {token}"}).sync() as env:
        first = env.reset(task_id=TASK)
        sid = first.observation["metadata"]["session_id"]
        assert env.step({"tool": "bash", "arguments": {"command": WRONG}}).done is False
        final = env.step({"tool": "submit"})
        message = trainers_verdict(live_server, sid, token)  # while the socket holds the session
    assert_hidden_from_agent(json.dumps([final.observation, final.metadata]), message)
    assert final.done is True and final.reward == 0.0
    ended = {"terminated": True, "truncated": False}  # OpenEnv's `done`, told apart in every answer's metadata
    assert final.metadata == {**SEEN, **ended} and final.observation["metadata"] == {**SEEN, **ended}


def test_openenv_http_submit_shows_no_check_message(live_server: ThreadedServer) -> None:
    with httpx.Client(base_url=f"{live_server.url}/envs/terminal") as http:
        reset = http.post("/reset", json={"task_id": TASK}).json()
        sid, owner = reset["episode_id"], {"Authorization": f"Bearer {reset['client_token']}"}
        http.post("/step", json={"action": {"tool": "bash", "arguments": {"command": WRONG}}, "episode_id": sid},
                  headers=owner).raise_for_status()
        done = http.post("/step", json={"action": {"tool": "submit"}, "episode_id": sid}, headers=owner)
    assert done.status_code == 200, done.text
    assert_hidden_from_agent(done.text, trainers_verdict(live_server, sid, reset["client_token"]))
    assert done.json()["metadata"] == {**SEEN, "terminated": True, "truncated": False}
