"""A session's MCP endpoint by the book: JSON-RPC errors with the specification's codes and HTTP
statuses, bounded ids and nesting, no library text in any reply, Host/Origin checks, the caller at
the edge (GET included), `logging/setLevel`, no redirect, and the stateless 2026-07-28 revision."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import pytest

from envhub.core.auth import new_key
from envhub.server.thread import ThreadedServer, serve_in_thread
from tests.conftest import make_settings

JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TOKEN = "mcp-wire-tests-owner-token-0001"
OWNER = {**JSON, "Authorization": f"Bearer {TOKEN}"}
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"}}
#: What no reply may carry: a library's words, its URLs, an exception's name, a traceback.
LIBRARY_TEXT = re.compile(r"(?i:pydantic)|https?://|Traceback|\b[A-Z]\w*(Error|Exception)\b|(?i:validation error)")


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    with serve_in_thread(make_settings(families=["echo"], store_enabled=False, auth="off")) as live:
        yield live


@pytest.fixture
def mcp_url(server: ThreadedServer) -> str:
    created = httpx.post(server.url + "/v1/sessions", json={"env": "echo", "task_id": "echo/say-done"},
                         headers={"Authorization": f"Bearer {TOKEN}"})
    assert created.status_code == 201, created.text
    return f"{server.url}/v1/sessions/{created.json()['session_id']}/mcp"


def post(url: str, body: bytes | dict, headers: dict | None = None) -> httpx.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    r = httpx.post(url, content=data, headers=headers or OWNER, follow_redirects=False)
    assert not LIBRARY_TEXT.search(r.text), r.text[:500]
    return r


def error(r: httpx.Response, status: int, code: int, id: object = None) -> dict:
    assert r.status_code == status, (r.status_code, r.text[:300])
    body = r.json()
    assert body["jsonrpc"] == "2.0" and body["id"] == id and body["error"]["code"] == code, body
    return body["error"]


def rpc(method: str, params: dict | None = None, id: object = 1) -> dict:
    return {"jsonrpc": "2.0", "id": id, "method": method, **({"params": params} if params is not None else {})}


BIG = "9" * 5000


@pytest.mark.parametrize(("body", "status", "code"), [
    (b'{"jsonrpc": "2.0", "id": ' + BIG.encode() + b', "method": "ping"}', 400, -32600),
    (b'{"jsonrpc": "2.0", "id": 1e400, "method": "ping"}', 400, -32600),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', 400, -32600),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', 400, -32600),
    (b'{"jsonrpc": "2.0", "id": 9007199254740992, "method": "ping"}', 400, -32600),  # 2**53: not safe
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', 400, -32600),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', 400, -32600),
    (b"[" * 100_000 + b"]" * 100_000, 400, -32700),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_001,
     400, -32700),
    (b'{"jsonrpc": "2.0", "id": 1, "method": ', 400, -32700),
    (b"\\xff\\xfe not json", 400, -32700),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', 400, -32600),
    (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', 400, -32600),
    (b'{"jsonrpc": "2.0", "method": 7}', 400, -32600),
], ids=["5000-digit-id", "1e400-id", "object-id", "float-id", "unsafe-integer-id", "null-id", "bool-id",
        "100000-deep", "100000-deep-params", "truncated", "not-json", "batch", "wrong-version", "method-not-string"])
def test_malformed_messages_get_the_specs_codes_never_500(mcp_url: str, body: bytes, status: int, code: int) -> None:
    """A bad id (even `1e400` or an object) is an invalid request, answered, never taken for a notification."""
    err = error(post(mcp_url, body), status, code)
    assert err["message"] and len(err["message"]) < 300


def test_errors_of_a_well_formed_request_answer_its_id(mcp_url: str) -> None:
    error(post(mcp_url, rpc("no/such/method", {}, id="abc")), 200, -32601, "abc")
    error(post(mcp_url, rpc("tools/call", {"arguments": {}}, id=3)), 200, -32602, 3)
    error(post(mcp_url, rpc("tools/call", {"name": "echo", "arguments": [1]}, id=4)), 200, -32602, 4)
    error(post(mcp_url, rpc("tools/call", {"name": "x" * 500}, id=5)), 200, -32602, 5)
    huge = b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "echo", "arguments": ' \
           b'{"message": ' + BIG.encode() + b"}}}"
    error(post(mcp_url, huge), 200, -32602, 6)
    error(post(mcp_url, rpc("initialize", {"capabilities": {}}, id=7)), 200, -32602, 7)
    ok = post(mcp_url, rpc("ping", {}, id=9007199254740991))  # the largest safe integer is an id
    assert ok.status_code == 200 and ok.json() == {"jsonrpc": "2.0", "id": 9007199254740991, "result": {}}


def test_notifications_and_responses_are_accepted_without_an_answer(mcp_url: str) -> None:
    for body in ({"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "id": 5, "result": {}}):
        r = post(mcp_url, body)
        assert r.status_code == 202 and r.content == b""


def test_logging_set_level_is_served(mcp_url: str) -> None:
    r = post(mcp_url, rpc("logging/setLevel", {"level": "info"}))
    assert r.status_code == 200 and r.json()["result"] == {}
    error(post(mcp_url, rpc("logging/setLevel", {"level": "loud"}, id=2)), 200, -32602, 2)
    init = post(mcp_url, rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "t", "version": "1"}})).json()["result"]
    assert init["protocolVersion"] == "2025-11-25" and "logging" in init["capabilities"]
    older = post(mcp_url, rpc("initialize", {"protocolVersion": "2024-01-01", "capabilities": {}})).json()
    assert older["result"]["protocolVersion"] == "2025-11-25"  # negotiated down to what we serve


def test_the_documented_url_answers_without_a_redirect(mcp_url: str) -> None:
    for url in (mcp_url, mcp_url + "/"):
        r = post(url, rpc("tools/list", {}))
        assert r.status_code == 200, (url, r.status_code, r.headers.get("location"))
        assert {t["name"] for t in r.json()["result"]["tools"]} == {"echo", "verify"}


def test_get_and_delete_are_405_and_content_type_is_checked(mcp_url: str) -> None:
    for method in ("GET", "DELETE"):
        r = httpx.request(method, mcp_url, headers=OWNER)
        assert r.status_code == 405 and r.headers["allow"] == "POST"
    r = httpx.post(mcp_url, content=b"{}", headers={**OWNER, "Content-Type": "text/plain"})
    assert r.status_code == 415 and r.json()["error"]["code"] == -32600


@pytest.mark.parametrize("headers", [{"Host": "evil.example.com"}, {"Origin": "http://evil.example.com"},
                                     {"Origin": "null"}, {"Host": "127.0.0.1.evil.example.com:80"}])
def test_dns_rebinding_is_refused(mcp_url: str, headers: dict) -> None:
    """A page that points its DNS name at the loopback server cannot drive it: Host and Origin must
    name an allowed host (loopback by default)."""
    r = httpx.post(mcp_url, json=rpc("tools/list", {}), headers={**OWNER, **headers})
    assert r.status_code in (403, 421) and r.json()["error"]["code"] == -32600
    port = mcp_url.split(":")[2].split("/")[0]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
        ok = httpx.post(mcp_url, json=rpc("ping", {}), headers={**OWNER, "Host": host, "Origin": f"http://{host}"})
        assert ok.status_code == 200, (host, ok.text)


def test_allowed_hosts_setting_names_the_hosts() -> None:
    from envhub.server.mcp_http import HostPolicy

    configured = HostPolicy(["envhub.internal"], "0.0.0.0")
    assert configured.allows("envhub.internal:8000") and not configured.allows("localhost:8000")
    assert configured.origin_allowed("https://envhub.internal") and not configured.origin_allowed("null")
    assert HostPolicy([], "0.0.0.0").allows("anything")  # keys are required there; Host is not the guard
    assert not HostPolicy([], "127.0.0.1").allows("evil.example.com") and HostPolicy(["*"], "::1").allows("x")


def test_a_crash_names_no_exception_and_no_host_path(mcp_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool that crashes (a bug in the family) answers `env_error` with a log reference, never the
    exception's name or text, which may hold a host path."""
    from environments.echo import EchoEnvironment

    async def crash(self, call):
        raise RuntimeError("/var/lib/envhub/sessions/secret-host-path is gone")

    monkeypatch.setattr(EchoEnvironment, "step", crash)
    r = post(mcp_url, rpc("tools/call", {"name": "echo", "arguments": {"message": "x"}}))
    result = r.json()["result"]
    text = result["content"][0]["text"]
    assert result["isError"] and result["structuredContent"]["failure"] == "env_error"
    assert "RuntimeError" not in r.text and "/var/lib" not in r.text and "ref " in text


# -- keys on: the caller at the edge, GET included --------------------------------------------------
def test_unauthenticated_get_of_the_stream_is_refused_with_keys_on() -> None:
    secret, key = new_key("mcp-wire")
    with serve_in_thread(make_settings(families=["echo"], store_enabled=False, auth="on",
                                       api_keys=key.entry())) as keyed:
        sid = httpx.post(keyed.url + "/v1/sessions", json={"env": "echo"},
                         headers={"Authorization": f"Bearer {secret}"}).json()["session_id"]
        url = f"{keyed.url}/v1/sessions/{sid}/mcp"
        for method in ("GET", "POST", "DELETE"):
            r = httpx.request(method, url, headers=JSON, content=json.dumps(rpc("ping", {})), timeout=10)
            assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer"), method
        assert httpx.get(url, headers={"Authorization": f"Bearer {secret}"}).status_code == 405


# -- 2026-07-28: stateless -------------------------------------------------------------------------
def modern(url: str, method: str, params: dict | None = None, id: object = 1, **headers: str) -> httpx.Response:
    h = {**OWNER, "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if params and isinstance(params.get("name"), str):
        h["Mcp-Name"] = params["name"]
    return post(url, rpc(method, {"_meta": META, **(params or {})}, id), {**h, **headers})


def test_the_stateless_revision_plays_an_episode_without_initialize(mcp_url: str) -> None:
    discover = modern(mcp_url, "server/discover").json()["result"]
    assert discover["supportedVersions"] == [MODERN] and "tools" in discover["capabilities"]
    assert discover["resultType"] == "complete" and discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
    listed = modern(mcp_url, "tools/list").json()["result"]
    assert {t["name"] for t in listed["tools"]} == {"echo", "verify"}
    assert listed["ttlMs"] >= 0 and listed["cacheScope"] == "private"
    said = modern(mcp_url, "tools/call", {"name": "echo", "arguments": {"message": "done"}}).json()["result"]
    assert not said["isError"] and said["structuredContent"]["failure"] == "ok"
    verdict = modern(mcp_url, "tools/call", {"name": "verify", "arguments": {}}).json()["result"]
    assert verdict["structuredContent"]["reward"] == 1.0 and "mcp-session-id" not in verdict


def test_the_stateless_revision_refuses_what_the_spec_says(mcp_url: str) -> None:
    no_meta = post(mcp_url, rpc("server/discover", {}, 101),
                   {**OWNER, "MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"})
    error(no_meta, 400, -32602, 101)
    odd = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    unsupported = post(mcp_url, rpc("server/discover", {"_meta": odd}, 301),
                       {**OWNER, "MCP-Protocol-Version": "v999.0.0", "Mcp-Method": "server/discover"})
    data = error(unsupported, 400, -32022, 301)["data"]
    assert data == {"supported": ["2026-07-28"], "requested": "v999.0.0"}  # 2025-11-25 comes by `initialize`
    mismatch = post(mcp_url, rpc("server/discover", {"_meta": odd}, 302),
                    {**OWNER, "MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"})
    error(mismatch, 400, -32020, 302)
    error(modern(mcp_url, "tools/list", id=7, **{"Mcp-Method": "prompts/list"}), 400, -32020, 7)
    error(modern(mcp_url, "tools/call", {"name": "echo", "arguments": {}}, id=8, **{"Mcp-Name": "other"}),
          400, -32020, 8)
    older = post(mcp_url, rpc("tools/list", {}, 12), {**OWNER, "MCP-Protocol-Version": "2024-11-05"})
    error(older, 400, -32600, 12)  # a revision we do not serve, in the legacy era: 400 as its transport says
    for removed in ("initialize", "ping", "logging/setLevel", "unknown/method"):
        error(modern(mcp_url, removed, id=500), 404, -32601, 500)


def test_an_unknown_tool_is_a_protocol_error_and_still_the_agents_step(server: ThreadedServer, mcp_url: str) -> None:
    """MCP's tools page: an unknown tool is -32602, not a result; the episode records it as the agent's error."""
    err = error(post(mcp_url, rpc("tools/call", {"name": "no_such_tool", "arguments": {}}, id=11)), 200, -32602, 11)
    assert "no_such_tool" in err["message"]
    sid = mcp_url.rsplit("/", 2)[1]
    session = server.app.state.hub.manager.sessions[sid]
    assert [(e.action.tool, e.failure.value) for e in session.log] == [("no_such_tool", "agent_error")]
