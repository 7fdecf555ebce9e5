"""The app factory, the composition root: the hub, the API routers, the web pages (which import
nothing of the server: they read `app.state.registry`), error translation, access, the request
guard, the hub's lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from envhub.config import Settings, get_settings
from envhub.core.auth import Access
from envhub.core.hub import Hub
from envhub.server import frames, problems
from envhub.server.deps import READERS, get_caller
from envhub.server.encoding import SafeJSONResponse
from envhub.server.limits import BodySizeLimit
from envhub.server.mcp import SessionMcp
from envhub.server.routes import episodes, health, openenv, registry, runs, sessions, snapshots, ws
from envhub.spec import PROTOCOL_VERSION
from envhub.web import router as web_router


def create_app(settings: Settings | None = None, hub: Hub | None = None) -> FastAPI:
    settings = settings or get_settings()
    access = Access.from_settings(settings)  # before building anything: a keyless public server refuses to start
    hub = hub or Hub.build(settings)

    mcp = SessionMcp(hub)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await hub.start()
        try:
            async with mcp.running():
                yield
        finally:
            await hub.stop()

    app = FastAPI(title="envhub", version=PROTOCOL_VERSION, lifespan=lifespan,
                  default_response_class=SafeJSONResponse)
    app.state.hub = hub
    app.state.registry = hub.registry
    app.state.access = access
    problems.install(app)
    frames.quiet_invalid_utf8()
    for module in (sessions, snapshots, ws, openenv):  # each session route resolves its caller itself
        app.include_router(module.router)
    for path in ("/v1/sessions/{session_id}/mcp", "/v1/sessions/{session_id}/mcp/"):  # each answered, no redirect
        app.add_route(path, mcp, include_in_schema=False)  # MCP's streamable HTTP, one endpoint per session
    for module in (registry, health):
        app.include_router(module.router, dependencies=READERS)
    # Recorded episodes are their owners': a caller reads its own; anyone reads the aggregates
    # (before the router whose `/episodes/{id}` would take `summary` for an id).
    app.include_router(episodes.public_router)
    app.include_router(episodes.router, dependencies=[Depends(get_caller)])
    app.include_router(runs.router, dependencies=[Depends(get_caller)])  # training runs: their owners' too
    app.include_router(web_router, dependencies=READERS)  # the registry browser at /
    for mount in hub.extras.get("routers", []):
        app.include_router(mount)
    app.add_middleware(BodySizeLimit, limit=settings.max_body_bytes)
    return app
