"""The app factory: routers, error translation, the body-size limit, the hub's lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from envhub.config import Settings, get_settings
from envhub.server import problems
from envhub.server.hub import Hub
from envhub.server.limits import BodySizeLimit
from envhub.server.routes import episodes, health, openenv, registry, sessions, ws
from envhub.spec import PROTOCOL_VERSION
from envhub.web import router as web_router


def create_app(settings: Settings | None = None, hub: Hub | None = None) -> FastAPI:
    settings = settings or get_settings()
    hub = hub or Hub.build(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await hub.start()
        try:
            yield
        finally:
            await hub.stop()

    app = FastAPI(title="envhub", version=PROTOCOL_VERSION, lifespan=lifespan)
    app.state.hub = hub
    problems.install(app)
    for module in (sessions, ws, registry, health, openenv, episodes):
        app.include_router(module.router)
    app.include_router(web_router)  # the registry browser at /
    for mount in hub.extras.get("routers", []):
        app.include_router(mount)
    app.add_middleware(BodySizeLimit, limit=settings.max_body_bytes)
    return app
