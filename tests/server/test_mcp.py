"""A session's MCP endpoint, driven by the official MCP SDK's own client: a full episode per family."""

from __future__ import annotations

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from envhub.client import AsyncEnvClient
from envhub.config import REPO_ROOT
from envhub.server.thread import ThreadedServer, serve_in_thread
from tests.conftest import make_settings

JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def _call(name: str, arguments: dict, id: int = 2) -> dict:
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}

#: (task, harness): a full oracle episode in each family, one through a skin.
EPISODES = [("echo/say-done", "plain"), ("terminal/count-error-lines", "plain"),
            ("terminal/count-error-lines", "claude-code"), ("db/bank/ask-balance-001", "mcp"),
            ("office/banking/t01-clean", "plain"), ("swe/python/interval-merge", "plain")]


@pytest.fixture(scope="module")
def server():
    settings = make_settings(families=["echo", "terminal", "db", "office", "swe"], store_enabled=False,
                             tasks_dir=REPO_ROOT / "tasks")
    with serve_in_thread(settings) as live:
        yield live


@pytest.mark.parametrize(("task_id", "skin"), EPISODES)
async def test_an_mcp_client_plays_a_whole_episode(server: ThreadedServer, task_id: str, skin: str) -> None:
    hub = server.app.state.hub
    task = hub.catalog.get(task_id)
    family = hub.families[task.family]
    async with AsyncEnvClient(server.url) as envhub:
        created = await envhub.reset(task.family, task_id, harness=skin)
    sid = created.session_id
    expressed = hub.manager.sessions[sid].skin
    owner = {"Authorization": f"Bearer {created.client_token}"}
    async with streamablehttp_client(f"{server.url}/v1/sessions/{sid}/mcp", headers=owner) as (read, write, _), \
            ClientSession(read, write) as mcp:
        await mcp.initialize()
        listed = {t.name for t in (await mcp.list_tools()).tools}
        assert listed == {t.name for t in created.tools} | {"verify"}
        for action in family.oracle_actions(task):
            for call in expressed.express(action, {}):
                result = await mcp.call_tool(call.tool, call.arguments)
                assert not result.isError, result.content[0].text[-400:]
                assert result.structuredContent["failure"] == "ok"
        bad = await mcp.call_tool(next(iter(listed - {"verify"})), {"no_such_argument": 1})
        assert bad.isError and bad.structuredContent["failure"] == "agent_error"  # the agent's, and recorded
        verdict = await mcp.call_tool("verify", {})
    assert verdict.structuredContent["reward"] == 1.0 and verdict.structuredContent["failure_class"] == "ok"
    assert hub.manager.sessions[sid].step_count >= 2


async def test_another_callers_session_is_unknown_over_mcp(server: ThreadedServer) -> None:
    """The MCP endpoint keeps session ownership: without the owner's token, the session does not exist
    (404 for every message, `initialize` included), and nothing is done to it."""
    async with AsyncEnvClient(server.url) as envhub:
        created = await envhub.reset("echo", "echo/say-done")
    url = f"{server.url}/v1/sessions/{created.session_id}/mcp"
    stranger = {"Authorization": "Bearer someone-else-entirely-0123456789"}
    for headers in (stranger, {}):
        for body in (INIT, _call("verify", {})):
            r = httpx.post(url, json=body, headers={**JSON, **headers})
            assert r.status_code == 404 and r.json()["error"]["code"] == -32600, r.text
            assert "unknown session" in r.json()["error"]["message"]
    assert server.app.state.hub.manager.sessions[created.session_id].result is None  # nothing was judged
