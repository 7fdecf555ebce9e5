"""Access: API keys, per-key limits, and session ownership, each attack against a real server."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from prometheus_client import REGISTRY
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from envhub.client import EnvClient, auth_headers
from envhub.conformance import ConformanceSuite
from envhub.core.auth import Access, new_key, parse_entries
from envhub.errors import Unauthorized
from envhub.server.thread import serve_in_thread
from tests.conftest import make_settings
from tests.security.conftest import ECHO_ONLY_SECRET, KEY, SECRET, bearer

ECHO = {"env": "echo", "task_id": "echo/say-done"}
ACTION = {"tool": "echo", "arguments": {"message": "done"}}


# -- the policy --------------------------------------------------------------------------------------
def test_public_interface_without_keys_refuses_to_start():
    """Serving on 0.0.0.0 with no key configured: the server refuses to start rather than run open."""
    with pytest.raises(ValueError, match="API keys are required"):
        Access.from_settings(make_settings(host="0.0.0.0", auth="auto", api_keys="", api_keys_file=None))
    assert Access.from_settings(make_settings(host="0.0.0.0", auth="auto", api_keys=KEY.entry())).enabled
    assert not Access.from_settings(make_settings(host="127.0.0.1", auth="auto", api_keys="")).enabled
    assert not Access.from_settings(make_settings(host="::1", auth="auto", api_keys="")).enabled


def test_keys_are_stored_hashed_and_plaintext_is_refused(tmp_path):
    """A plaintext key in the keys file or environment is refused; only its SHA-256 is ever held."""
    assert SECRET not in KEY.entry() and KEY.sha256 in KEY.entry()
    with pytest.raises(ValueError, match="stored hashed"):
        parse_entries(f"trainer {SECRET}", "ENVHUB_API_KEYS")
    keys_file = tmp_path / "keys"
    keys_file.write_text(f"# team keys\n{KEY.entry()}\n")
    access = Access.from_settings(make_settings(auth="on", api_keys="", api_keys_file=keys_file))
    assert access.caller(f"Bearer {SECRET}").key == KEY


# -- keys on ---------------------------------------------------------------------------------------
def test_no_key_is_401_on_every_session_route(keyed_server):
    """Calling without a key: REST, OpenEnv HTTP and both WebSocket handshakes answer a 401 problem."""
    url = keyed_server.url
    for method, path, body in [("POST", "/v1/sessions", ECHO), ("GET", "/v1/sessions/x", None),
                               ("POST", "/v1/sessions/x/step", {"action": ACTION}), ("DELETE", "/v1/sessions/x", None),
                               ("POST", "/envs/echo/reset", {}), ("POST", "/step", {"action": ACTION}),
                               ("GET", "/state?episode_id=x", None)]:
        r = httpx.request(method, url + path, json=body)
        assert r.status_code == 401, (path, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")
        assert r.json()["code"] == "unauthorized" and r.headers["www-authenticate"].startswith("Bearer")
    for path in ("/v1/sessions/ws", "/envs/echo/ws", "/ws"):
        with pytest.raises(InvalidStatus) as denied:
            connect(url.replace("http", "ws") + path)
        assert denied.value.response.status_code == 401
        assert json.loads(denied.value.response.body)["code"] == "unauthorized"


def test_unknown_or_malformed_key_is_401(keyed_server):
    """A guessed key, or an Authorization header that is not Bearer, is a 401 problem (counted in /metrics)."""
    before = REGISTRY.get_sample_value("envhub_requests_rejected_total", {"code": "unauthorized"}) or 0
    for header in (f"Bearer {SECRET}x", "Basic dXNlcjpwYXNz", "Bearer", SECRET):
        r = httpx.post(keyed_server.url + "/v1/sessions", json=ECHO, headers={"Authorization": header})
        assert r.status_code == 401, header
    assert REGISTRY.get_sample_value("envhub_requests_rejected_total", {"code": "unauthorized"}) == before + 4


def test_key_limited_to_families_gets_403(keyed_server):
    """A key limited to echo asking for a terminal session gets a 403 problem, and no session."""
    before = keyed_server.hub.manager.active
    r = httpx.post(keyed_server.url + "/v1/sessions", json={"env": "terminal"}, headers=bearer(ECHO_ONLY_SECRET))
    assert r.status_code == 403 and r.json()["code"] == "forbidden"
    assert keyed_server.hub.manager.active == before
    ok = httpx.post(keyed_server.url + "/v1/sessions", json=ECHO, headers=bearer(ECHO_ONLY_SECRET))
    assert ok.status_code == 201 and ok.json()["client_token"] is None
    httpx.delete(f"{keyed_server.url}/v1/sessions/{ok.json()['session_id']}", headers=bearer(ECHO_ONLY_SECRET))


def test_session_quota_of_a_key_is_enforced(keyed_server):
    """A key with a quota of 3 cannot hold a 4th session: 429 + Retry-After until one closes."""
    with httpx.Client(base_url=keyed_server.url, headers=bearer(SECRET)) as http:
        sids = [http.post("/v1/sessions", json=ECHO).json()["session_id"] for _ in range(KEY.max_sessions)]
        refused = http.post("/v1/sessions", json=ECHO)
        assert refused.status_code == 429 and refused.json()["code"] == "quota_exceeded"
        assert refused.headers["retry-after"] == "1"
        http.delete(f"/v1/sessions/{sids.pop()}")
        sids.append(http.post("/v1/sessions", json=ECHO).json()["session_id"])
        for sid in sids:
            http.delete(f"/v1/sessions/{sid}")


async def test_concurrent_resets_cannot_overrun_a_quota(keyed_server):
    """A burst of simultaneous resets by one key gets exactly its quota of sessions, the rest 429."""
    async with httpx.AsyncClient(base_url=keyed_server.url, headers=bearer(SECRET)) as http:
        answers = await asyncio.gather(*(http.post("/v1/sessions", json=ECHO) for _ in range(8)))
        assert sorted(r.status_code for r in answers) == [201] * KEY.max_sessions + [429] * (8 - KEY.max_sessions)
        for r in answers:
            if r.status_code == 201:
                await http.delete(f"/v1/sessions/{r.json()['session_id']}")


def test_forks_count_against_a_keys_quota(keyed_server):
    """A key at its quota cannot fork past it: forks are sessions the key holds."""
    with httpx.Client(base_url=keyed_server.url, headers=bearer(SECRET)) as http:
        sid = http.post("/v1/sessions", json=ECHO).json()["session_id"]
        try:
            refused = http.post(f"/v1/sessions/{sid}/fork", json={"n": KEY.max_sessions})
            assert refused.status_code == 429, refused.text
            made = http.post(f"/v1/sessions/{sid}/fork", json={"n": KEY.max_sessions - 1})
            assert made.status_code == 201, made.text
            forks = [s["session_id"] for s in made.json()["sessions"]]
            assert http.post("/v1/sessions", json=ECHO).status_code == 429
            for fork in forks:
                http.delete(f"/v1/sessions/{fork}")
        finally:
            http.delete(f"/v1/sessions/{sid}")


def test_another_key_cannot_reach_a_session(keyed_server):
    """Holding another key's session id: state, step, verify and close all act as if it did not exist."""
    with httpx.Client(base_url=keyed_server.url, headers=bearer(SECRET)) as owner, \
            httpx.Client(base_url=keyed_server.url, headers=bearer(ECHO_ONLY_SECRET)) as other:
        sid = owner.post("/v1/sessions", json=ECHO).json()["session_id"]
        assert other.get(f"/v1/sessions/{sid}").status_code == 404
        assert other.post(f"/v1/sessions/{sid}/step", json={"action": ACTION}).status_code == 404
        assert other.post(f"/v1/sessions/{sid}/verify").status_code == 404
        assert other.post(f"/v1/sessions/{sid}/fork", json={"n": 1}).status_code == 404
        assert other.post(f"/v1/sessions/{sid}/snapshot").status_code == 404
        assert other.post("/envs/echo/step", json={"action": ACTION, "episode_id": sid}).status_code == 404
        assert other.delete(f"/v1/sessions/{sid}").status_code == 204  # as for any unknown id...
        assert owner.get(f"/v1/sessions/{sid}").json()["step_count"] == 0  # ...and nothing was done
        with connect(keyed_server.url.replace("http", "ws") + "/v1/sessions/ws",
                     additional_headers=bearer(ECHO_ONLY_SECRET)) as ws:
            ws.send(json.dumps({"op": "step", "session_id": sid, "data": {"action": ACTION}}))
            assert json.loads(ws.recv())["error"]["status"] == 404
            ws.send(json.dumps({"op": "fork", "session_id": sid}))
            assert json.loads(ws.recv())["error"]["status"] == 404
        owner.delete(f"/v1/sessions/{sid}")


def test_registry_and_health_stay_public_unless_configured(keyed_server):
    """Without a key the registry and /health answer (public_reads); with public_reads off they are 401."""
    for path in ("/health", "/v1/envs", "/v1/tasks?env=echo", "/", "/envs/echo/schema", "/v1/episodes/summary"):
        assert httpx.get(keyed_server.url + path).status_code == 200, path
    closed = make_settings(families=["echo"], auth="on", api_keys=KEY.entry(), public_reads=False)
    with serve_in_thread(closed) as server:
        for path in ("/health", "/v1/envs", "/", "/metrics", "/v1/episodes/summary"):
            assert httpx.get(server.url + path).status_code == 401, path
            assert httpx.get(server.url + path, headers=bearer(SECRET)).status_code == 200, path


def test_clients_pass_ENVHUB_API_KEY(keyed_server, monkeypatch):
    """The client and OpenEnv's client carry ENVHUB_API_KEY; without it the client says where a key goes."""
    with EnvClient(keyed_server.url, retries=0) as client, pytest.raises(Unauthorized, match="ENVHUB_API_KEY"):
        client.reset("echo")
    monkeypatch.setenv("ENVHUB_API_KEY", SECRET)
    with EnvClient(keyed_server.url) as client, client.session("echo", task_id="echo/say-done") as s:
        assert s.step("echo", message="done").failure.value == "ok" and s.verify().reward == 1.0
    openenv = pytest.importorskip("openenv.core.generic_client")
    with openenv.GenericEnvClient(base_url=f"{keyed_server.url}/envs/echo", headers=auth_headers()).sync() as env:
        env.reset(task_id="echo/say-done")
        env.step({"tool": "echo", "arguments": {"message": "done"}})
        assert env.step({"tool": "submit"}).reward == 1.0


def test_conformance_suite_passes_with_a_key(keyed_server):
    """`envhub conformance --api-key` judges a server with keys on."""
    outcomes = ConformanceSuite(keyed_server.url, env="echo", task_id="echo/say-done", api_key=SECRET).run()
    assert [o for o in outcomes if not o.ok] == []


# -- keys off: client tokens -----------------------------------------------------------------------
def test_session_id_alone_is_not_a_credential(open_server):
    """Without keys, knowing a session id (e.g. from the episodes page) does not reach the session."""
    created = httpx.post(open_server.url + "/v1/sessions", json=ECHO).json()
    sid, token = created["session_id"], created["client_token"]
    assert len(token) >= 16
    assert httpx.get(f"{open_server.url}/v1/sessions/{sid}").status_code == 404
    assert httpx.post(f"{open_server.url}/v1/sessions/{sid}/step", json={"action": ACTION}).status_code == 404
    guessed = bearer("x" * 32)
    assert httpx.get(f"{open_server.url}/v1/sessions/{sid}", headers=guessed).status_code == 404
    assert httpx.get(f"{open_server.url}/v1/sessions/{sid}", headers=bearer(token)).status_code == 200
    assert httpx.post(open_server.url + "/v1/sessions", json=ECHO, headers=bearer("short")).status_code == 401
    httpx.delete(f"{open_server.url}/v1/sessions/{sid}", headers=bearer(token))


def test_websocket_connection_cannot_reach_another_connections_session(open_server):
    """A second WebSocket connection naming the first one's session id gets 404; the first's token works."""
    base = open_server.url.replace("http", "ws") + "/v1/sessions/ws"
    with connect(base) as first, connect(base) as second:
        first.send(json.dumps({"op": "reset", "id": 1, "data": ECHO}))
        created = json.loads(first.recv())["data"]
        second.send(json.dumps({"op": "state", "session_id": created["session_id"]}))
        assert json.loads(second.recv())["error"]["status"] == 404
        state = httpx.get(f"{open_server.url}/v1/sessions/{created['session_id']}",
                          headers=bearer(created["client_token"]))
        assert state.status_code == 200


# -- recorded episodes: their owners' -------------------------------------------------------------
def test_recorded_episodes_are_their_owners_and_an_admins(data_dir):
    """Key B (or no key) cannot list or read key A's recorded trajectory, over the API or the replay
    page; an admin key reads every one; an oracle run's actions are the admin's alone."""
    from tests.store.conftest import echo_settings
    from tests.web.conftest import wait_recorded

    admin_secret, admin = new_key("ops", admin=True)
    other_secret, other = new_key("tenant-b")
    settings = echo_settings(data_dir, auth="on", api_keys=";".join(e.entry() for e in (KEY, other, admin)))
    with serve_in_thread(settings) as server:
        ids = {}
        for name, policy, said in (("run", "p1", "TRAJECTORY-SECRET done"), ("oracle", "envhub:oracle", "done")):
            with EnvClient(server.url, api_key=SECRET) as owner, \
                    owner.session("echo", task_id="echo/say-done", policy_version=policy) as s:
                s.step("echo", message=said)
                s.verify()
            ids[name] = s.id
            wait_recorded(settings.store_url, s.id, steps=1)
        url = server.url
        for headers in (bearer(other_secret), {}):
            listed = httpx.get(url + "/v1/episodes", headers=headers)
            assert (listed.status_code, listed.json().get("total")) == ((200, 0) if headers else (401, None))
            for sid in ids.values():
                assert httpx.get(f"{url}/v1/episodes/{sid}", headers=headers).status_code == (404 if headers else 401)
                page = httpx.get(f"{url}/episodes/{sid}", headers=headers)
                assert page.status_code == 404 and "TRAJECTORY-SECRET" not in page.text
            index = httpx.get(url + "/episodes", headers=headers).text
            assert 'data-everyone="2"' in index and not any(sid in index for sid in ids.values())
        summary = httpx.get(url + "/v1/episodes/summary").json()  # public reads: the aggregates
        assert summary["episodes"] == summary["verified"] == 2 and "TRAJECTORY" not in str(summary)
        mine = httpx.get(f"{url}/v1/episodes/{ids['run']}", headers=bearer(SECRET)).json()
        assert "TRAJECTORY-SECRET" in mine["steps"][0]["arguments"]["message"]
        assert httpx.get(f"{url}/v1/episodes/{ids['oracle']}", headers=bearer(SECRET)).json()["steps"] == []
        assert "TRAJECTORY-SECRET" in httpx.get(f"{url}/episodes/{ids['run']}", headers=bearer(SECRET)).text
        everything = httpx.get(url + "/v1/episodes", headers=bearer(admin_secret)).json()
        assert {e["id"] for e in everything["episodes"]} == set(ids.values())
        oracle = httpx.get(f"{url}/v1/episodes/{ids['oracle']}", headers=bearer(admin_secret)).json()
        assert oracle["steps"][0]["arguments"] == {"message": "done"}
        assert 'id="actions-hidden"' not in httpx.get(f"{url}/episodes/{ids['oracle']}",
                                                       headers=bearer(admin_secret)).text


def test_an_admin_key_entry_round_trips():
    """`admin` in a key entry marks the key; nothing else does."""
    _, admin = new_key("ops", admin=True)
    assert admin.entry().endswith("  admin") and parse_entries(admin.entry(), "test")[0].admin
    assert not parse_entries(KEY.entry(), "test")[0].admin
    with pytest.raises(ValueError, match="unknown option"):
        parse_entries(KEY.entry() + " admin=yes", "test")
