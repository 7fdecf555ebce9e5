"""The pool's single entry point: a session-sticky, capacity-aware router for envhub replicas.

Why a router of our own rather than nginx/haproxy: a new session names its family in the JSON
*body* (`POST /v1/sessions {"env": ...}`), and OpenEnv's HTTP step names its episode in the body
too; path-hashing proxies cannot route on either. And a consistent hash moves a dead replica's
sessions to a live one, which answers `404 unknown session` where the truth is `env_error`. This
router is one process with one table, so its behaviour is easy to state:

- **Discovery**: every `ENVHUB_ROUTER_UPSTREAMS` entry is `family=host:port`; `host` is a compose
  service name, re-resolved every second to *all* its addresses, so each replica is addressed on
  its own (scaling up or down needs no router change).
- **Placement**: a new session goes to the ready replica of its family with the most free slots
  (`/ready` 200 and `/capacity`, polled every second). A replica at capacity answers `/ready` 503
  and gets no new sessions; when no replica is ready the router answers `503 unavailable` with
  `Retry-After` itself. A replica that refuses the connection is skipped for the next one.
- **Stickiness**: the router records `session_id → replica` from the `201` answer (and OpenEnv
  `episode_id → replica`); later calls go there. After a router restart the owner is found again by
  asking every replica `GET /v1/sessions/{id}`. WebSockets are pinned to one replica per connection.
- **Snapshots** stay on the replica that took them: the router records `snapshot_id → replica` from
  the `201` answer (else finds it by asking every replica's `GET /v1/snapshots` as the caller: the
  first that lists it and serves its family; replicas sharing a data folder list the same ones), so a
  session started `from_snapshot` goes there; `GET /v1/snapshots` merges every replica's list, and a
  fork's sessions are recorded as the forked session's replica's.
- **Access**: the client's `Authorization` goes through to the replica, which checks it (API keys,
  session ownership); the router's own probes send `ENVHUB_API_KEY` when set, and the owner lookup
  sends the caller's credential, so it finds only the caller's own sessions.
- **Faults**: a call for a session whose replica no longer answers is `502` with
  `failure_class: env_error` (retryable, never trainable), the shape every envhub error has;
  closing such a session is `204` (close is idempotent).

Run: `python docker/router.py` (port `ENVHUB_ROUTER_PORT`, default 8080). Depends on aiohttp only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import socket
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

log = logging.getLogger("envhub.router")
PROBLEM = "application/problem+json"
HOP = {"connection", "keep-alive", "transfer-encoding", "upgrade", "host", "content-length", "te", "trailer",
       "proxy-authorization", "proxy-authenticate"}


@dataclass
class Replica:
    url: str
    families: set[str] = field(default_factory=set)
    ready: bool = False
    free: int = 0
    seen: float = field(default_factory=time.monotonic)


def problem(status: int, code: str, detail: str, failure_class: str | None = None,
            retry_after: int | None = None) -> web.Response:
    body: dict[str, Any] = {"type": f"https://envhub.dev/problems/{code}", "title": code.replace("_", " "),
                            "status": status, "detail": detail, "code": code}
    if failure_class:
        body["failure_class"] = failure_class
        body["retryable"] = failure_class in ("env_error", "verifier_error", "unavailable")
    headers = {"Retry-After": str(retry_after)} if retry_after else {}
    return web.Response(status=status, body=json.dumps(body), content_type=PROBLEM, headers=headers)


class Router:
    def __init__(self, upstreams: dict[str, list[str]], refresh_s: float = 1.0) -> None:
        self.upstreams = upstreams  # family → ["host:port", ...]
        self.refresh_s = refresh_s
        self.replicas: dict[str, Replica] = {}  # url → replica
        self.owners: dict[str, str] = {}  # session or episode id → replica url
        self.snapshots: dict[str, str] = {}  # snapshot id → the replica that keeps it
        self.http: aiohttp.ClientSession | None = None
        self._poller: asyncio.Task[None] | None = None

    # -- discovery and health ------------------------------------------------------------------------
    async def start(self, app: web.Application) -> None:
        key = os.environ.get("ENVHUB_API_KEY")  # for the probes (/ready, /capacity) when reads need a key
        self.probe_headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_connect=2),
                                          auto_decompress=False)
        await self.refresh()
        self._poller = asyncio.create_task(self._poll_forever())

    async def stop(self, app: web.Application) -> None:
        if self._poller:
            self._poller.cancel()
        if self.http:
            await self.http.close()

    async def _resolve(self, hostport: str) -> list[str]:
        host, _, port = hostport.rpartition(":")
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
        except OSError:
            return []
        return sorted({f"http://{i[4][0]}:{port}" for i in infos})

    async def _probe(self, rep: Replica) -> None:
        assert self.http
        try:
            async with self.http.get(f"{rep.url}/ready", headers=self.probe_headers,
                                     timeout=aiohttp.ClientTimeout(total=2)) as r:
                rep.ready = r.status == 200
            async with self.http.get(f"{rep.url}/capacity", headers=self.probe_headers,
                                     timeout=aiohttp.ClientTimeout(total=2)) as r:
                rep.free = int((await r.json()).get("free", 0)) if r.status == 200 else 0
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError, OSError):
            rep.ready, rep.free = False, 0

    async def refresh(self) -> None:
        found: dict[str, Replica] = {}
        for family, hosts in self.upstreams.items():
            for hp in hosts:
                for url in await self._resolve(hp):
                    rep = found.get(url) or self.replicas.get(url) or Replica(url=url)
                    rep.families.add(family)
                    found[url] = rep
        self.replicas = found
        await asyncio.gather(*(self._probe(r) for r in found.values()))

    async def _poll_forever(self) -> None:
        while True:
            await asyncio.sleep(self.refresh_s)
            try:
                await self.refresh()
            except Exception:  # noqa: BLE001 - the poller must survive anything
                log.exception("refresh failed")

    def of(self, family: str) -> list[Replica]:
        return [r for r in self.replicas.values() if family in r.families]

    def any_replica(self) -> Replica | None:
        live = [r for r in self.replicas.values() if r.ready] or list(self.replicas.values())
        return random.choice(live) if live else None

    def lost(self, url: str) -> Awaitable[Any] | None:
        """What completes once the replica at `url` is known to be gone. DNS discovery cannot tell
        (a WebSocket then ends when its TCP connection does); a pool that watches its replicas can."""
        return None

    def pick(self, family: str, exclude: set[str] = frozenset()) -> Replica | None:  # type: ignore[assignment]
        ready = [r for r in self.of(family) if r.ready and r.url not in exclude]
        if not ready:
            return None
        best = max(r.free for r in ready)
        return random.choice([r for r in ready if r.free == best])

    # -- forwarding ----------------------------------------------------------------------------------
    async def forward(self, request: web.Request, url: str, body: bytes | None = None) -> web.Response:
        """Send the request to one replica; connection faults propagate as aiohttp errors."""
        assert self.http
        request["upstream"] = url
        data = await request.read() if body is None else body
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        async with self.http.request(request.method, url + request.rel_url.path_qs, data=data, headers=headers,
                                     allow_redirects=False) as r:
            payload = await r.read()
            out = {k: v for k, v in r.headers.items() if k.lower() not in HOP}
            return web.Response(status=r.status, body=payload, headers=out)

    async def to_family(self, request: web.Request, family: str, body: bytes | None = None) -> web.Response:
        tried: set[str] = set()
        while True:
            rep = self.pick(family, tried)
            if rep is None:
                if family not in self.upstreams:
                    return await self.to_any(request, body)  # unknown family: let a replica say so
                # A family the pool serves but with no ready replica right now (all full, starting, or
                # being replaced after a node died): retryable, never a replica's "unknown environment".
                return problem(503, "unavailable", f"every {family} replica is at capacity or not ready",
                               "unavailable", retry_after=1)
            try:
                return await self.forward(request, rep.url, body)
            except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError):
                # Refused (ClientConnectorError is a ClientOSError), or the connection dropped with
                # no answer (a replica being stopped, or a kept-alive connection it had closed): try
                # the next one. A reset it saw before it went leaves at most an orphan session
                # there, which its lease reaps.
                rep.ready = False
                tried.add(rep.url)

    async def to_any(self, request: web.Request, body: bytes | None = None) -> web.Response:
        rep = self.any_replica()
        if rep is None:
            return problem(503, "unavailable", "no envhub replica is up", "unavailable", retry_after=1)
        try:
            return await self.forward(request, rep.url, body)
        except aiohttp.ClientError as e:
            return problem(502, "env_error", f"replica {rep.url} failed: {e!r}", "env_error")

    async def owner(self, key: str, authorization: str | None = None) -> str | None:
        """The replica holding session `key`; asks every replica (as the caller) when the table does not know."""
        if key in self.owners:
            return self.owners[key]
        assert self.http
        headers = {"Authorization": authorization} if authorization else {}

        async def has(rep: Replica) -> str | None:
            try:
                async with self.http.get(f"{rep.url}/v1/sessions/{key}", headers=headers,
                                         timeout=aiohttp.ClientTimeout(total=3)) as r:
                    return rep.url if r.status == 200 else None
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
                return None

        hits = [u for u in await asyncio.gather(*(has(r) for r in self.replicas.values())) if u]
        if hits:
            self.owners[key] = hits[0]
        return hits[0] if hits else None

    async def ask_all(self, path: str, authorization: str | None) -> dict[str, Any]:
        """`GET path` of every replica, as the caller: the JSON of each that answered 200, by url."""
        assert self.http
        headers = {"Authorization": authorization} if authorization else {}

        async def ask(rep: Replica) -> tuple[str, Any]:
            try:
                async with self.http.get(rep.url + path, headers=headers, timeout=aiohttp.ClientTimeout(total=5)) as r:
                    return rep.url, (await r.json() if r.status == 200 else None)
            except (aiohttp.ClientError, asyncio.TimeoutError, ValueError, OSError):
                return rep.url, None

        return {url: data for url, data in await asyncio.gather(*(ask(r) for r in self.replicas.values()))
                if data is not None}

    def learn_snapshots(self, answers: dict[str, Any]) -> list[dict[str, Any]]:
        """The snapshots that replicas' `GET /v1/snapshots` answers list, once each. Where the table
        does not know a holder yet, the first replica listing it that serves its family becomes it:
        replicas that share a data folder (a Ray node's) all list the same snapshots."""
        listed: dict[str, dict[str, Any]] = {}
        for url, data in answers.items():
            rep = self.replicas.get(url)
            for snap in data.get("snapshots", []):
                listed.setdefault(snap["snapshot_id"], snap)
                if rep is None or snap.get("env") in rep.families:
                    self.snapshots.setdefault(snap["snapshot_id"], url)
        return list(listed.values())

    async def snapshot_holder(self, snapshot_id: str, authorization: str | None) -> str | None:
        """The replica keeping the caller's snapshot `snapshot_id`; asks every replica when the table does not know."""
        if snapshot_id not in self.snapshots:
            self.learn_snapshots(await self.ask_all("/v1/snapshots", authorization))
        return self.snapshots.get(snapshot_id)

    async def to_owner(self, request: web.Request, key: str, gone_ok: bool = False) -> web.Response:
        url = await self.owner(key, request.headers.get("Authorization"))
        if url is None and gone_ok:
            return web.Response(status=204)  # closing an unknown session is fine (idempotent)
        if url is None:
            return problem(404, "not_found", f"unknown session {key!r} (closed, reaped, or never created)")
        try:
            resp = await self.forward(request, url)
        except (aiohttp.ClientError, asyncio.TimeoutError) as e:
            if gone_ok:
                self.owners.pop(key, None)
                return web.Response(status=204)
            return problem(502, "env_error", f"the replica that held session {key} is gone ({type(e).__name__}); "
                                             "the episode cannot continue", "env_error")
        if request.method == "DELETE" and resp.status == 204:
            self.owners.pop(key, None)
        return resp


# -- routes ------------------------------------------------------------------------------------------------
def build_app(router: Router) -> web.Application:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.on_startup.append(router.start)
    app.on_cleanup.append(router.stop)
    r = web.RouteTableDef()

    @r.get("/health")
    async def health(request: web.Request) -> web.Response:
        return web.json_response({"status": "healthy", "protocol": "1", "router": True})

    @r.get("/ready")
    async def ready(request: web.Request) -> web.Response:
        fams = {f: sum(x.ready for x in router.of(f)) for f in router.upstreams}
        if not any(fams.values()):
            return problem(503, "unavailable", "no replica is ready", "unavailable", retry_after=1)
        return web.json_response({"status": "ready", "ready_replicas": fams})

    @r.get("/capacity")
    async def capacity(request: web.Request) -> web.Response:
        assert router.http
        total = active = 0
        for rep in list(router.replicas.values()):
            with contextlib.suppress(aiohttp.ClientError, asyncio.TimeoutError, ValueError, OSError):
                async with router.http.get(f"{rep.url}/capacity", timeout=aiohttp.ClientTimeout(total=2)) as resp:
                    c = await resp.json()
                    total += int(c["max_sessions"])
                    active += int(c["active_sessions"])
        return web.json_response({"max_sessions": total, "active_sessions": active, "free": max(0, total - active)})

    @r.get("/router/replicas")
    async def replicas(request: web.Request) -> web.Response:
        return web.json_response([{"url": x.url, "families": sorted(x.families), "ready": x.ready, "free": x.free}
                                  for x in router.replicas.values()])

    async def merged(request: web.Request, key: str, ident: str) -> web.Response:
        """One answer per family, their lists merged (registry routes)."""
        assert router.http
        first: dict[str, Any] | None = None
        items: dict[str, Any] = {}
        for fam in router.upstreams:
            rep = router.pick(fam) or next(iter(router.of(fam)), None)
            if rep is None:
                continue
            with contextlib.suppress(aiohttp.ClientError, asyncio.TimeoutError, ValueError, OSError):
                async with router.http.get(rep.url + request.rel_url.path_qs) as resp:
                    if resp.status != 200:
                        continue
                    data = await resp.json()
            if first is None:
                first = data
            for item in data.get(key, []):
                items.setdefault(item[ident], item)
        if first is None:
            return problem(503, "unavailable", "no replica answered", "unavailable", retry_after=1)
        first[key] = list(items.values())
        if "count" in first:
            first["count"] = len(items)
        return web.json_response(first)

    @r.get("/v1/envs")
    async def envs(request: web.Request) -> web.Response:
        return await merged(request, "envs", "name")

    @r.get("/v1/envs/{env}")
    async def env_info(request: web.Request) -> web.Response:
        return await router.to_family(request, request.match_info["env"])

    @r.get("/v1/tasks")
    async def tasks(request: web.Request) -> web.Response:
        env = request.query.get("env")
        if env:
            return await router.to_family(request, env)
        return await merged(request, "tasks", "id")

    @r.get("/v1/tasks/{task_id:.*}")
    async def task(request: web.Request) -> web.Response:
        fam = request.match_info["task_id"].split("/", 1)[0]
        if fam in router.upstreams:
            return await router.to_family(request, fam)
        return await router.to_any(request)

    @r.post("/v1/sessions")
    async def create(request: web.Request) -> web.Response:
        body = await request.read()
        try:
            env = json.loads(body).get("env")
        except (ValueError, AttributeError):
            env = None
        if not isinstance(env, str) or env not in router.upstreams:
            return await router.to_any(request, body)  # a replica gives the proper 400/404/422
        snapshot = json.loads(body).get("from_snapshot")
        holder = await router.snapshot_holder(snapshot, request.headers.get("Authorization")) \
            if isinstance(snapshot, str) else None
        if holder is None:  # a snapshot no replica keeps goes to the family: a replica gives the proper 404
            resp = await router.to_family(request, env, body)
        else:
            try:
                resp = await router.forward(request, holder, body)
            except (aiohttp.ClientError, asyncio.TimeoutError):
                router.snapshots.pop(snapshot, None)
                return problem(404, "not_found", f"snapshot {snapshot!r} was kept by replica {holder}, which is gone")
        if resp.status == 201 and resp.body:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                router.owners[json.loads(resp.body)["session_id"]] = request["upstream"]
        return resp

    @r.get("/v1/sessions/ws")
    async def sessions_ws(request: web.Request) -> web.StreamResponse:
        return await proxy_ws(request, lambda first: (first.get("data") or {}).get("env")
                              if first.get("op") == "reset" else None)

    @r.route("*", "/v1/sessions/{sid}{tail:(/.*)?}")
    async def session_call(request: web.Request) -> web.Response:
        resp = await router.to_owner(request, request.match_info["sid"], gone_ok=request.method == "DELETE")
        tail = request.match_info["tail"]
        if resp.status == 201 and resp.body and tail in ("/snapshot", "/fork"):
            with contextlib.suppress(ValueError, KeyError, TypeError):
                made = json.loads(resp.body)
                if tail == "/snapshot":
                    router.snapshots[made["snapshot_id"]] = request["upstream"]
                for s in made.get("sessions", []):  # a fork's sessions live beside their source
                    router.owners[s["session_id"]] = request["upstream"]
        return resp

    @r.get("/v1/snapshots")
    async def snapshots(request: web.Request) -> web.Response:
        answers = await router.ask_all(request.rel_url.path_qs, request.headers.get("Authorization"))
        if not answers:  # none answered 200: one replica's own answer says why (a 401, or 503 when none is up)
            return await router.to_any(request)
        merged = router.learn_snapshots(answers)
        merged.sort(key=lambda snap: snap.get("created_at", ""), reverse=True)  # newest first, as a replica lists
        return web.json_response({**next(iter(answers.values())), "snapshots": merged})

    @r.delete("/v1/snapshots/{snapshot_id}")
    async def delete_snapshot(request: web.Request) -> web.Response:
        snapshot_id = request.match_info["snapshot_id"]
        holder = await router.snapshot_holder(snapshot_id, request.headers.get("Authorization"))
        if holder is None:
            return web.Response(status=204)  # idempotent, as a replica answers an unknown id
        with contextlib.suppress(aiohttp.ClientError, asyncio.TimeoutError):  # a gone replica took it along
            resp = await router.forward(request, holder)
            if resp.status != 204:
                return resp
        router.snapshots.pop(snapshot_id, None)
        return web.Response(status=204)

    @r.get("/envs/{env}/ws")
    async def openenv_ws(request: web.Request) -> web.StreamResponse:
        env = request.match_info["env"]
        return await proxy_ws(request, lambda first: env)

    @r.post("/envs/{env}/reset")
    async def openenv_reset(request: web.Request) -> web.Response:
        resp = await router.to_family(request, request.match_info["env"])
        if resp.status == 200 and resp.body:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                router.owners[json.loads(resp.body)["episode_id"]] = request["upstream"]
        return resp

    @r.post("/envs/{env}/step")
    async def openenv_step(request: web.Request) -> web.Response:
        body = await request.read()
        with contextlib.suppress(ValueError, AttributeError):
            eid = json.loads(body).get("episode_id")
            if eid and eid in router.owners:
                return await router.to_owner(request, eid)
        return await router.to_family(request, request.match_info["env"], body)

    @r.route("*", "/envs/{env}/{rest:.*}")
    async def openenv_other(request: web.Request) -> web.Response:
        return await router.to_family(request, request.match_info["env"])

    @r.route("*", "/{tail:.*}")
    async def fallback(request: web.Request) -> web.Response:
        return await router.to_any(request)

    async def proxy_ws(request: web.Request, family_of) -> web.StreamResponse:
        """Pin a WebSocket to one replica, chosen by the first frame (a reset names the family)."""
        assert router.http
        client = web.WebSocketResponse(max_msg_size=0)
        await client.prepare(request)
        first = await client.receive()
        if first.type != aiohttp.WSMsgType.TEXT:
            await client.close()
            return client
        try:
            family = family_of(json.loads(first.data))
        except (ValueError, AttributeError):
            family = None
        tried: set[str] = set()
        while True:
            rep = router.pick(family, tried) if family in router.upstreams else router.any_replica()
            if rep is None or rep.url in tried:
                # No ready replica, or every one refused: nothing was started, so it is retryable.
                await client.send_str(json.dumps({"ok": False, "error": {
                    "status": 503, "code": "unavailable", "failure_class": "unavailable", "retryable": True,
                    "detail": "no replica is ready" if not tried else "no replica accepted the connection"}}))
                await client.close()
                return client
            ws_url = "ws" + rep.url[len("http"):] + request.rel_url.path_qs
            try:
                upstream = await router.http.ws_connect(ws_url, max_msg_size=0)
                break
            except aiohttp.ClientError:
                # Refused before it saw a frame (it died since the last probe): skip it, as HTTP does.
                rep.ready = False
                tried.add(rep.url)
        await upstream.send_str(first.data)

        async def pump(src, dst) -> None:
            async for msg in src:
                if msg.type == aiohttp.WSMsgType.TEXT:
                    await dst.send_str(msg.data)
                elif msg.type == aiohttp.WSMsgType.BINARY:
                    await dst.send_bytes(msg.data)
                else:
                    break

        tasks = [asyncio.create_task(pump(client, upstream)), asyncio.create_task(pump(upstream, client))]
        lost = router.lost(rep.url)
        watch = [asyncio.ensure_future(lost)] if lost is not None else []
        done, _ = await asyncio.wait([*tasks, *watch], return_when=asyncio.FIRST_COMPLETED)
        # The replica's side ended first (its process died: the connection broke) or the pool saw it
        # die (a vanished node sends nothing): the connection's sessions are gone. Say so, never hang.
        if (tasks[1] in done or (watch and watch[0] in done)) and not client.closed:
            await client.send_str(json.dumps({"ok": False, "error": {
                "status": 503, "code": "unavailable", "failure_class": "unavailable", "retryable": True,
                "detail": "the replica holding this connection's sessions is gone; start a new episode"}}))
        for t in [*tasks, *watch]:
            t.cancel()
        await upstream.close()
        await client.close()
        return client

    app.add_routes(r)
    return app


def parse_upstreams(spec: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in spec.split(","):
        part = part.strip()
        if part:
            family, _, hostport = part.partition("=")
            out.setdefault(family.strip(), []).append(hostport.strip())
    return out


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    upstreams = parse_upstreams(os.environ.get("ENVHUB_ROUTER_UPSTREAMS", "echo=127.0.0.1:8000"))
    port = int(os.environ.get("ENVHUB_ROUTER_PORT", "8080"))
    web.run_app(build_app(Router(upstreams)), host="0.0.0.0", port=port, access_log=None)


if __name__ == "__main__":
    main()
