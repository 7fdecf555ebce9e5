"""The pool's HTTP entry point: the compose pool's router (docker/router.py), discovering replicas
from the Ray pool instead of DNS, and answering for replicas that died.

Everything the router does holds here unchanged: placement on the ready replica of a family with
the most free slots, `503 unavailable` + `Retry-After` only when none is ready, session affinity by
table (`session_id → replica`, recorded from the 201), registry answers merged across families.
What differs: a session whose replica died answers `503 unavailable` (retryable, masked from
training), also for a call already in flight when it died; and `/ray/replicas` lets an operator see,
add and drain replicas.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from typing import Any

from aiohttp import web

from envhub.config import REPO_ROOT
from envhub.ray.pool import RayPool


def _router_module() -> Any:
    """docker/router.py, which is a script of the compose pool (in the hub image at /app/docker)."""
    name = "envhub_compose_router"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "docker" / "router.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


router = _router_module()


class RayRouter(router.Router):
    def __init__(self, pool: RayPool, refresh_s: float = 0.5) -> None:
        super().__init__({f: [] for f in pool.config.families}, refresh_s)
        self.pool = pool

    async def refresh(self) -> None:
        found: dict[str, Any] = {}
        for slot in self.pool.live():
            rep = self.replicas.get(slot.url) or router.Replica(url=slot.url)
            rep.families = {slot.family}
            found[slot.url] = rep
        self.replicas = found
        await asyncio.gather(*(self._probe(r) for r in found.values()))

    def lost(self, url: str) -> Any:
        slot = self.pool.by_url(url)
        return slot.dead.wait() if slot is not None else None

    async def to_owner(self, request: web.Request, key: str, gone_ok: bool = False) -> web.Response:
        url = await self.owner(key, request.headers.get("Authorization"))
        slot = self.pool.by_url(url) if url else None
        if slot is None or slot.state != "dead":
            call = asyncio.ensure_future(super().to_owner(request, key, gone_ok))
            if slot is None:
                return await call
            died = asyncio.ensure_future(slot.dead.wait())
            await asyncio.wait({call, died}, return_when=asyncio.FIRST_COMPLETED)
            died.cancel()
            if call.done():
                resp = call.result()  # a 502 is the router's: the call to the replica broke
                if resp.status != 502 or not await self.pool.confirm_dead(slot):
                    return resp
            else:
                call.cancel()
        if gone_ok:  # closing a lost session is fine; until then its calls keep answering `unavailable`
            self.owners.pop(key, None)
            return web.Response(status=204)
        return router.problem(503, "unavailable", f"session {key} was on replica {slot.rid}, which is gone; "
                                                  "the episode cannot continue (start a new one)",
                              "unavailable", retry_after=1)


#: The entry point's router, for whoever holds the app (tests, benchmarks).
ROUTER = web.AppKey("router", RayRouter)


def build_app(pool: RayPool) -> web.Application:
    rr = RayRouter(pool)
    app = router.build_app(rr)
    app[ROUTER] = rr

    async def start_pool(app: web.Application) -> None:
        await pool.start()

    async def stop_pool(app: web.Application) -> None:
        await pool.stop()

    app.on_startup.insert(0, start_pool)  # replicas first, so the router's first refresh sees them
    app.on_cleanup.append(stop_pool)

    async def add(request: web.Request) -> web.Response:
        try:
            env = json.loads(await request.read())["env"]
        except (ValueError, KeyError, TypeError):
            env = None
        if env not in pool.config.families:
            return router.problem(400, "bad_request", f"env must be one of {pool.config.families}")
        slot = await pool.add(env)
        return web.json_response({"id": slot.rid, "url": slot.url, "state": slot.state},
                                 status=201 if slot.state == "live" else 503)

    @web.middleware
    async def admin(request: web.Request, handler: Any) -> web.StreamResponse:
        """`/ray/replicas`: GET the table, POST {"env"} adds one, DELETE /ray/replicas/ID drains one.
        (A middleware because the router's catch-all route would shadow routes added after it.)"""
        if request.path == "/ray/replicas" and request.method == "GET":
            return web.json_response(pool.table())
        if request.path == "/ray/replicas" and request.method == "POST":
            return await add(request)
        if request.path.startswith("/ray/replicas/") and request.method == "DELETE":
            if not pool.remove(request.path.rsplit("/", 1)[1]):
                return router.problem(404, "not_found", "no such live replica")
            return web.Response(status=202)
        return await handler(request)

    app.middlewares.append(admin)
    return app
