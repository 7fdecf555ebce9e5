"""Liveness, readiness, capacity and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from envhub.errors import RequirementMissing, Unavailable
from envhub.server.deps import HubDep, ManagerDep
from envhub.spec import PROTOCOL_VERSION, Capacity

router = APIRouter(tags=["health"])


@router.get("/health")
async def health() -> dict[str, str]:
    """Liveness; also OpenEnv's `/health` answer shape."""
    return {"status": "healthy", "protocol": PROTOCOL_VERSION}


@router.get("/ready")
async def ready(hub: HubDep) -> dict[str, object]:
    """Ready when the sandbox backend works, there is room for a session and some family can run.

    A family that lacks something here (e.g. a SWE toolchain) is listed under `unavailable` with
    the reason and the command that fixes it; when no served family can run any task, 503."""
    hub.backend.check()
    limit, active = hub.manager.capacity()
    if active >= limit:
        raise Unavailable(f"at capacity: {active}/{limit} sessions")
    unavailable = {}
    for name in hub.families:
        availability, missing, cannot = hub.registry.family_availability(name)
        if availability != "available":
            unavailable[name] = {"availability": availability, "unavailable_tasks": cannot,
                                 **(missing.model_dump() if missing else {})}
    if hub.families and all(unavailable.get(n, {}).get("availability") == "unavailable" for n in hub.families):
        raise RequirementMissing("no served family can run here: " + "; ".join(
            f"{name}: {u.get('reason', 'its tasks lack what they need')}" for name, u in unavailable.items()),
            retry_after_s=60, fix=" && ".join(u["fix"] for u in unavailable.values() if u.get("fix")),
            unavailable=unavailable)
    return {"status": "ready", "families": sorted(hub.families), "tasks": len(hub.catalog.tasks),
            "unavailable": unavailable}


@router.get("/capacity", response_model=Capacity)
async def capacity(manager: ManagerDep) -> Capacity:
    limit, active = manager.capacity()
    return Capacity(max_sessions=limit, active_sessions=active, free=max(0, limit - active))


@router.get("/metrics")
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
