"""How an episode ends, as Gymnasium means it, on every surface of a real server.

A step past the task's step budget is `truncated` (a budget cut it off: not a terminal state) and
never `terminated`; an ordinary step is neither; `done` is always `terminated or truncated`; verify
is the terminal state, after which a step is refused. REST, the session WebSocket (the native one and
the ASGI route), OpenEnv's routes (its one `done`, and which of the two in `metadata`) and MCP's
structured result say the same. The clients' models are held to it in `tests/client/test_twins.py`.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from websockets.sync.client import connect

from envhub.config import Settings
from envhub.server.app import create_app
from envhub.server.thread import ThreadedServer, serve_in_thread
from tests.conftest import echo_with_step_budget, make_settings

BUDGET = 2
TASK = "echo/say-done"
ECHO = {"tool": "echo", "arguments": {"message": "hi"}}
ORDINARY = {"terminated": False, "truncated": False, "done": False}
CUT_OFF = {"terminated": False, "truncated": True, "done": True}
#: BUDGET ordinary steps, then every step is cut off (the budget stays spent).
EXPECTED = [ORDINARY] * BUDGET + [CUT_OFF] * 2


def ended(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: answer.get(k) for k in ORDINARY}


@pytest.fixture(scope="module")
def settings() -> Iterator[Settings]:
    root = Path(tempfile.mkdtemp(prefix="envhub-budget-", dir="/var/tmp"))  # the verifier's sandbox reads it
    root.chmod(0o755)
    try:
        yield make_settings(families=["echo"], tasks_dir=echo_with_step_budget(root, BUDGET), store_enabled=False)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def server(settings: Settings) -> Iterator[ThreadedServer]:
    with serve_in_thread(settings) as live:
        yield live


@pytest.fixture
def owner() -> dict[str, str]:
    return {"Authorization": f"Bearer {secrets.token_urlsafe(24)}"}


def test_a_step_past_the_budget_is_truncated_and_verify_terminates(server: ThreadedServer, owner) -> None:
    with httpx.Client(base_url=server.url, headers=owner) as http:
        sid = http.post("/v1/sessions", json={"env": "echo", "task_id": TASK}).json()["session_id"]
        answers = [http.post(f"/v1/sessions/{sid}/step", json={"action": ECHO}).json() for _ in EXPECTED]
        assert [ended(a) for a in answers] == EXPECTED, answers
        cut = answers[BUDGET]
        assert cut["failure"] == "agent_timeout" and "step budget of 2" in cut["observation"]["text"], cut
        state = http.get(f"/v1/sessions/{sid}").json()
        assert ended(state) == CUT_OFF and state["verified"] is False, state
        http.post(f"/v1/sessions/{sid}/verify").raise_for_status()
        assert ended(http.get(f"/v1/sessions/{sid}").json()) == {"terminated": True, "truncated": True, "done": True}
        refused = http.post(f"/v1/sessions/{sid}/step", json={"action": ECHO})
        assert refused.status_code == 409 and refused.json()["code"] == "episode_over", refused.text


def test_verify_within_the_budget_is_terminated_not_truncated(server: ThreadedServer, owner) -> None:
    with httpx.Client(base_url=server.url, headers=owner) as http:
        sid = http.post("/v1/sessions", json={"env": "echo", "task_id": TASK}).json()["session_id"]
        assert ended(http.post(f"/v1/sessions/{sid}/step", json={"action": ECHO}).json()) == ORDINARY
        assert ended(http.get(f"/v1/sessions/{sid}").json()) == ORDINARY
        http.post(f"/v1/sessions/{sid}/verify").raise_for_status()
        assert ended(http.get(f"/v1/sessions/{sid}").json()) == {"terminated": True, "truncated": False, "done": True}
        assert http.post(f"/v1/sessions/{sid}/step", json={"action": ECHO}).status_code == 409


@contextlib.contextmanager
def session_socket(route: str, server: ThreadedServer, settings: Settings,
                   owner: dict[str, str]) -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
    """`ask(frame) -> answer frame` over the session WebSocket: the native one on the real server's
    port, or the ASGI route (`envhub.server.routes.ws`) that in-process clients reach."""
    if route == "native":
        with connect(server.url.replace("http", "ws") + "/v1/sessions/ws", additional_headers=owner) as ws:
            yield lambda frame: (ws.send(json.dumps(frame)), json.loads(ws.recv()))[1]
    else:
        with TestClient(create_app(settings)) as client, \
                client.websocket_connect("/v1/sessions/ws", headers=owner) as ws:
            yield lambda frame: (ws.send_text(json.dumps(frame)), json.loads(ws.receive_text()))[1]


@pytest.mark.parametrize("route", ["native", "asgi"])
def test_the_session_socket_says_the_same(route: str, server: ThreadedServer, settings: Settings, owner) -> None:
    with session_socket(route, server, settings, owner) as ask:
        assert ask({"op": "reset", "id": 0, "data": {"env": "echo", "task_id": TASK}})["ok"]
        answers = [ask({"op": "step", "id": i, "data": {"action": ECHO}}) for i in range(1, len(EXPECTED) + 1)]
        assert all(a["ok"] for a in answers), answers
        assert [ended(a["data"]) for a in answers] == EXPECTED, answers
        assert ask({"op": "verify", "id": 9})["ok"]
        refused = ask({"op": "step", "id": 10, "data": {"action": ECHO}})
        assert refused["ok"] is False and refused["error"]["code"] == "episode_over", refused


def openenv_ended(answer: dict[str, Any]) -> dict[str, Any]:
    """OpenEnv's `done`, with which of the two it is from the metadata (the same in the observation)."""
    assert answer["observation"]["done"] == answer["done"] and answer["observation"]["metadata"] == answer["metadata"]
    return {"terminated": answer["metadata"].get("terminated"), "truncated": answer["metadata"].get("truncated"),
            "done": answer["done"]}


def test_openenv_http_done_is_terminated_or_truncated(server: ThreadedServer) -> None:
    with httpx.Client(base_url=f"{server.url}/envs/echo") as http:
        reset = http.post("/reset", json={"task_id": TASK}).json()
        sid, owner = reset["episode_id"], {"Authorization": f"Bearer {reset['client_token']}"}
        answers = [http.post("/step", json={"action": ECHO, "episode_id": sid}, headers=owner).json()
                   for _ in EXPECTED]
        assert [openenv_ended(a) for a in answers] == EXPECTED, answers
        submit = http.post("/step", json={"action": {"tool": "submit"}, "episode_id": sid}, headers=owner).json()
    assert openenv_ended(submit) == {"terminated": True, "truncated": True, "done": True}, submit


def test_openenv_ws_done_is_terminated_or_truncated(server: ThreadedServer, owner) -> None:
    with connect(server.url.replace("http", "ws") + "/envs/echo/ws", additional_headers=owner) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
        assert json.loads(ws.recv())["type"] == "observation"
        answers = []
        for _ in EXPECTED:
            ws.send(json.dumps({"type": "step", "data": ECHO}))
            answers.append(json.loads(ws.recv())["data"])
        assert [openenv_ended(a) for a in answers] == EXPECTED, answers
        ws.send(json.dumps({"type": "close"}))


async def test_mcp_structured_content_says_the_same(server: ThreadedServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        created = (await http.post("/v1/sessions", json={"env": "echo", "task_id": TASK})).json()
    url = f"{server.url}/v1/sessions/{created['session_id']}/mcp"
    owner = {"Authorization": f"Bearer {created['client_token']}"}
    async with streamablehttp_client(url, headers=owner) as (read, write, _), ClientSession(read, write) as mcp:
        await mcp.initialize()
        results = [await mcp.call_tool(ECHO["tool"], ECHO["arguments"]) for _ in EXPECTED]
    assert [ended(r.structuredContent or {}) for r in results] == EXPECTED, results
    assert results[BUDGET].isError and results[BUDGET].structuredContent["failure"] == "agent_timeout"
