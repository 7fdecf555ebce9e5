"""A black-box protocol conformance suite: real episodes against any envhub server.

Every check talks to the server over the network only (HTTP, WebSocket, and OpenEnv's routes),
so it can judge a server in another process, container or machine. With `api_key` (a server with
keys on) every call carries it; without, the suite uses a client token of its own. A check of
what the family declines (`501`: a family that cannot fork or snapshot) is reported not applicable,
not failed.
"""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from websockets.sync.client import connect

PROBLEM = "application/problem+json"


@dataclass
class CheckOutcome:
    name: str
    ok: bool
    detail: str = ""
    #: False when the check does not apply to the server's family (which says so): no failure.
    applicable: bool = True


class NotApplicable(Exception):
    """Raised by a check whose feature the family declines (`501`): reported, not failed."""


class ConformanceSuite:
    def __init__(self, base_url: str, *, env: str = "echo", task_id: str | None = None,
                 action: dict[str, Any] | None = None, timeout: float = 120, api_key: str | None = None) -> None:
        self.base = base_url.rstrip("/")
        self.api_key = api_key
        self.auth = {"Authorization": f"Bearer {api_key or secrets.token_urlsafe(24)}"}
        self.http = httpx.Client(base_url=self.base, timeout=timeout, headers=self.auth)
        self.env = env
        self.task_id = task_id
        self.action = action or {"tool": "echo", "arguments": {"message": "done"}}
        self.ws_base = "ws" + self.base[len("http"):]

    def checks(self) -> list[tuple[str, Callable[[], None]]]:
        return [(name.removeprefix("check_").replace("_", " "), getattr(self, name))
                for name in dir(self) if name.startswith("check_")]

    def run(self) -> list[CheckOutcome]:
        out = []
        for name, fn in self.checks():
            try:
                fn()
                out.append(CheckOutcome(name, True))
            except NotApplicable as e:
                out.append(CheckOutcome(name, True, str(e)[:500], applicable=False))
            except AssertionError as e:
                out.append(CheckOutcome(name, False, str(e)[:500]))
            except Exception as e:  # noqa: BLE001 - any crash is a failed check
                out.append(CheckOutcome(name, False, f"{type(e).__name__}: {e}"[:500]))
        self.http.close()
        return out

    # -- helpers -----------------------------------------------------------------------------------
    def _reset(self) -> dict[str, Any]:
        body = {"env": self.env, **({"task_id": self.task_id} if self.task_id else {})}
        r = self.http.post("/v1/sessions", json=body)
        assert r.status_code == 201, f"reset answered {r.status_code}: {r.text[:300]}"
        return r.json()

    def _problem(self, r: httpx.Response, status: int) -> dict[str, Any]:
        assert r.status_code == status, f"expected {status}, got {r.status_code}: {r.text[:300]}"
        assert r.headers.get("content-type", "").startswith(PROBLEM), f"content-type {r.headers.get('content-type')}"
        body = r.json()
        for key in ("type", "title", "status", "detail", "code"):
            assert key in body, f"problem body lacks {key!r}: {body}"
        return body

    def _step(self, sid: str) -> None:
        r = self.http.post(f"/v1/sessions/{sid}/step", json={"action": self.action})
        assert r.status_code == 200 and "observation" in r.json(), f"step answered {r.status_code}: {r.text[:300]}"

    def _step_count(self, sid: str) -> int:
        return self.http.get(f"/v1/sessions/{sid}").json()["step_count"]

    def _copied(self, r: httpx.Response, what: str) -> dict[str, Any]:
        """A copy's answer (fork, snapshot): `201`, or `NotApplicable` for a family that cannot copy."""
        if r.status_code == 501:
            raise NotApplicable(f"{self.env} cannot {what}: {self._problem(r, 501)['detail']}")
        assert r.status_code == 201, f"{what} answered {r.status_code}: {r.text[:300]}"
        return r.json()

    # -- checks ------------------------------------------------------------------------------------
    def check_health_and_capacity(self) -> None:
        assert self.http.get("/health").json().get("status") == "healthy"
        cap = self.http.get("/capacity").json()
        assert cap["free"] == cap["max_sessions"] - cap["active_sessions"], cap
        assert "envhub_sessions_refused_total" in self.http.get("/metrics").text, "no Prometheus metrics"
        assert self.http.get("/openapi.json").json()["paths"].get("/v1/sessions"), "openapi lacks /v1/sessions"

    def check_registry(self) -> None:
        envs = self.http.get("/v1/envs").json()["envs"]
        assert any(e["name"] == self.env for e in envs), f"{self.env} not listed"
        tasks = self.http.get("/v1/tasks", params={"env": self.env}).json()["tasks"]
        for t in tasks:
            assert t["env"] == self.env and "validation" in t
            public = {"protocol", "id", "env", "title", "prompt", "difficulty", "tags", "metadata", "validation",
                      "by_harness", "unavailable", "calibration"}
            hidden = set(t) - public
            assert not hidden, f"task info exposes {hidden}"
        self._problem(self.http.get("/v1/tasks/no/such-task"), 404)

    def check_episode_rest(self) -> None:
        created = self._reset()
        sid = created["session_id"]
        assert created["tools"] and all("inputSchema" in t for t in created["tools"]), "tools not in MCP shape"
        step = self.http.post(f"/v1/sessions/{sid}/step", json={"action": self.action}).json()
        for key in ("observation", "reward", "terminated", "truncated", "done", "failure", "trainable", "retryable"):
            assert key in step, f"step answer lacks {key}"
        # An ordinary step ends nothing; `done` is always `terminated or truncated`.
        assert step["terminated"] is False and step["truncated"] is False and step["done"] is False, step
        state = self.http.get(f"/v1/sessions/{sid}").json()
        assert state["step_count"] == 1, state
        verdict = self.http.post(f"/v1/sessions/{sid}/verify").json()
        assert verdict["failure_class"] in ("ok", "agent_error", "agent_timeout"), verdict
        assert verdict["trainable"] is True and 0 <= verdict["reward"] <= 1
        again = self.http.post(f"/v1/sessions/{sid}/verify").json()
        assert again["reward"] == verdict["reward"], "verify is not idempotent"
        assert self.http.delete(f"/v1/sessions/{sid}").status_code == 204
        assert self.http.delete(f"/v1/sessions/{sid}").status_code == 204, "close is not idempotent"
        self._problem(self.http.get(f"/v1/sessions/{sid}"), 404)

    def check_idempotent_step(self) -> None:
        sid = self._reset()["session_id"]
        key = uuid.uuid4().hex
        a = self.http.post(f"/v1/sessions/{sid}/step", json={"action": self.action, "idempotency_key": key}).json()
        b = self.http.post(f"/v1/sessions/{sid}/step", json={"action": self.action, "idempotency_key": key}).json()
        assert a == b, "a repeated idempotency key acted twice"
        assert self.http.get(f"/v1/sessions/{sid}").json()["step_count"] == 1
        self.http.delete(f"/v1/sessions/{sid}")

    def check_bad_action_is_agent_error(self) -> None:
        sid = self._reset()["session_id"]
        r = self.http.post(f"/v1/sessions/{sid}/step", json={"action": {"tool": "no_such_tool", "arguments": {}}})
        assert r.status_code == 200, f"bad action answered {r.status_code}"
        body = r.json()
        assert body["failure"] == "agent_error" and body["observation"]["is_error"] and body["trainable"], body
        self.http.delete(f"/v1/sessions/{sid}")

    def check_malformed_requests(self) -> None:
        self._problem(self.http.post("/v1/sessions", content=b"{not json", headers={"content-type": "application/json"}),
                      400)
        self._problem(self.http.post("/v1/sessions/nope/step", json={"action": self.action}), 404)
        self._problem(self.http.post("/v1/sessions", json={"env": "no-such-env"}), 404)
        self._problem(self.http.post("/v1/sessions", json={"env": self.env, "task_id": "no/such-task"}), 404)
        self._problem(self.http.post("/v1/sessions", json={"env": self.env, "seed": "x"}), 422)
        sid = self._reset()["session_id"]
        self._problem(self.http.post(f"/v1/sessions/{sid}/step", json={"action": "ls -la"}), 422)
        self.http.delete(f"/v1/sessions/{sid}")
        big = b'{"env": "' + b"x" * (8 * 1024 * 1024) + b'"}'
        self._problem(self.http.post("/v1/sessions", content=big, headers={"content-type": "application/json"}), 413)

    def check_session_ownership(self) -> None:
        """Another caller (another token, or no key) is told the session does not exist."""
        created = self._reset()
        sid = created["session_id"]
        stranger = {"Authorization": f"Bearer {secrets.token_urlsafe(24)}"}
        expected = 401 if self.api_key else 404  # with keys on, a made-up credential is no key at all
        self._problem(self.http.get(f"/v1/sessions/{sid}", headers=stranger), expected)
        self._problem(self.http.post(f"/v1/sessions/{sid}/step", json={"action": self.action}, headers=stranger),
                      expected)
        self.http.delete(f"/v1/sessions/{sid}", headers=stranger)
        assert self.http.get(f"/v1/sessions/{sid}").status_code == 200, "another caller closed the session"
        self.http.delete(f"/v1/sessions/{sid}")
        body = {"env": self.env, **({"task_id": self.task_id} if self.task_id else {})}
        bare = httpx.post(f"{self.base}/v1/sessions", json=body, timeout=self.http.timeout)
        if self.api_key:
            self._problem(bare, 401)
            return
        assert bare.status_code == 201 and bare.json().get("client_token"), f"no client_token: {bare.text[:300]}"
        mine = {"Authorization": f"Bearer {bare.json()['client_token']}"}
        bare_sid = bare.json()["session_id"]
        assert httpx.get(f"{self.base}/v1/sessions/{bare_sid}", headers=mine).status_code == 200
        self._problem(httpx.get(f"{self.base}/v1/sessions/{bare_sid}"), 404)
        httpx.delete(f"{self.base}/v1/sessions/{bare_sid}", headers=mine)

    def check_fork(self) -> None:
        """Two forks: new ids, each at the source's step and stepping on its own; the source goes on
        unchanged, and another caller is told the session does not exist."""
        sid = self._reset()["session_id"]
        forks: list[str] = []
        try:
            self._step(sid)
            forks = [s["session_id"] for s in self._copied(self.http.post(f"/v1/sessions/{sid}/fork",
                                                                           json={"n": 2}), "fork")["sessions"]]
            assert len(forks) == 2 and len({sid, *forks}) == 3, f"not two new ids: {forks}"
            for f in forks:
                assert self._step_count(f) == 1, "a fork does not start at its source's step"
                self._step(f)
                assert self._step_count(f) == 2
            assert self._step_count(sid) == 1, "a fork's step counted in its source"
            stranger = {"Authorization": f"Bearer {secrets.token_urlsafe(24)}"}
            self._problem(self.http.post(f"/v1/sessions/{sid}/fork", json={"n": 1}, headers=stranger),
                          401 if self.api_key else 404)
        finally:
            for s in (sid, *forks):
                self.http.delete(f"/v1/sessions/{s}")

    def check_snapshot(self) -> None:
        """A snapshot is listed, starts a session at its step, and is gone once deleted."""
        sid = self._reset()["session_id"]
        try:
            self._step(sid)
            info = self._copied(self.http.post(f"/v1/sessions/{sid}/snapshot"), "snapshot")
        finally:
            self.http.delete(f"/v1/sessions/{sid}")
        snap = info["snapshot_id"]
        assert (info["session_id"], info["step"]) == (sid, 1), info
        listed = [s["snapshot_id"] for s in self.http.get("/v1/snapshots").json()["snapshots"]]
        assert snap in listed, f"{snap} not listed: {listed}"
        started = self.http.post("/v1/sessions", json={"env": self.env, "from_snapshot": snap})
        assert started.status_code == 201, f"from_snapshot answered {started.status_code}: {started.text[:300]}"
        new = started.json()["session_id"]
        try:
            assert self._step_count(new) == 1, "a session from a snapshot does not start at its step"
            self._step(new)
        finally:
            self.http.delete(f"/v1/sessions/{new}")
        assert self.http.delete(f"/v1/snapshots/{snap}").status_code == 204
        assert snap not in [s["snapshot_id"] for s in self.http.get("/v1/snapshots").json()["snapshots"]]
        self._problem(self.http.post("/v1/sessions", json={"env": self.env, "from_snapshot": snap}), 404)

    def check_websocket_episode(self) -> None:
        with connect(f"{self.ws_base}/v1/sessions/ws", max_size=None, additional_headers=self.auth) as ws:
            body = {"env": self.env, **({"task_id": self.task_id} if self.task_id else {})}
            ws.send(json.dumps({"op": "reset", "id": 1, "data": body}))
            a = json.loads(ws.recv())
            assert a["ok"] and a["id"] == 1, a
            ws.send(json.dumps({"op": "step", "id": 2, "data": {"action": self.action}}))
            b = json.loads(ws.recv())
            assert b["ok"] and "observation" in b["data"], b
            ended = {k: b["data"].get(k) for k in ("terminated", "truncated", "done")}
            assert ended == {"terminated": False, "truncated": False, "done": False}, b
            ws.send(json.dumps({"op": "verify", "id": 3}))
            c = json.loads(ws.recv())
            assert c["ok"] and "reward" in c["data"], c
            ws.send("{broken")
            d = json.loads(ws.recv())
            assert d["ok"] is False and d["error"]["status"] == 400, d
            ws.send(json.dumps({"op": "close", "id": 4}))
            assert json.loads(ws.recv())["ok"]

    def check_openenv_ws(self) -> None:
        with connect(f"{self.ws_base}/envs/{self.env}/ws", max_size=None, additional_headers=self.auth) as ws:
            ws.send(json.dumps({"type": "reset", "data": {"task_id": self.task_id} if self.task_id else {}}))
            a = json.loads(ws.recv())
            assert a["type"] == "observation" and a["data"]["done"] is False, a
            ws.send(json.dumps({"type": "step", "data": self.action}))
            b = json.loads(ws.recv())
            assert b["type"] == "observation" and "reward" in b["data"], b
            meta = b["data"]["metadata"]
            assert meta.get("terminated") is False and meta.get("truncated") is False, b
            ws.send(json.dumps({"type": "state"}))
            c = json.loads(ws.recv())
            assert c["type"] == "state" and c["data"]["step_count"] == 1, c
            ws.send(json.dumps({"type": "step", "data": {"tool": "submit"}}))
            d = json.loads(ws.recv())
            assert d["data"]["done"] is True and d["data"]["reward"] is not None, d
            ws.send(json.dumps({"type": "bogus"}))
            assert json.loads(ws.recv())["data"]["code"] == "UNKNOWN_TYPE"
            ws.send(json.dumps({"type": "close"}))

    def check_openenv_http(self) -> None:
        prefix = f"/envs/{self.env}"
        assert self.http.get("/health").json()["status"] == "healthy"
        schema = self.http.get(f"{prefix}/schema").json()
        assert {"action", "observation", "state"} <= set(schema), schema.keys()
        assert self.http.get(f"{prefix}/metadata").json()["name"] == self.env
        extra = {"task_id": self.task_id} if self.task_id else {}
        reset = self.http.post(f"{prefix}/reset", json=extra).json()
        assert reset["done"] is False and "observation" in reset, reset
        step = self.http.post(f"{prefix}/step", json={"action": self.action, "episode_id": reset["episode_id"]}).json()
        assert "observation" in step and step["done"] is False, step
        assert step["metadata"].get("terminated") is False and step["metadata"].get("truncated") is False, step
        done = self.http.post(f"{prefix}/step", json={"action": {"tool": "submit"},
                                                      "episode_id": reset["episode_id"]}).json()
        assert done["done"] is True and done["metadata"].get("terminated") is True, done
        stateless = self.http.post(f"{prefix}/step", json={"action": self.action, **extra}).json()
        assert "observation" in stateless, stateless
