"""Liveness, readiness, capacity and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from envhub.errors import Unavailable
from envhub.server.deps import HubDep, ManagerDep
from envhub.spec import PROTOCOL_VERSION, Capacity

router = APIRouter(tags=["health"])


@router.get("/health")
async def health() -> dict[str, str]:
    """Liveness; also OpenEnv's `/health` answer shape."""
    return {"status": "healthy", "protocol": PROTOCOL_VERSION}


@router.get("/ready")
async def ready(hub: HubDep) -> dict[str, object]:
    """Ready when the sandbox backend works and there is room for a session."""
    hub.backend.check()
    limit, active = hub.manager.capacity()
    if active >= limit:
        raise Unavailable(f"at capacity: {active}/{limit} sessions")
    return {"status": "ready", "families": sorted(hub.families), "tasks": len(hub.catalog.tasks)}


@router.get("/capacity", response_model=Capacity)
async def capacity(manager: ManagerDep) -> Capacity:
    limit, active = manager.capacity()
    return Capacity(max_sessions=limit, active_sessions=active, free=max(0, limit - active))


@router.get("/metrics")
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
