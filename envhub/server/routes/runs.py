"""`/v1/runs`: training runs, as the trainer reports them, with figures computed from their episodes.

A run is its reporter's, as an episode is (`envhub.store.viewer`): the list holds the caller's own
runs (every one for an admin key), another caller's run is unknown (404), and only its owner
reports its steps. The store does the work (`envhub.store.runs`); each route only delegates.
"""

from __future__ import annotations

from fastapi import APIRouter, Query

from envhub.errors import Forbidden, NotFound
from envhub.server.deps import CallerDep, HubDep
from envhub.server.routes.episodes import MAX_OFFSET, store_of
from envhub.spec import RunCreate, RunDetail, RunInfo, RunList, RunStep, RunStepReport
from envhub.store.calibrations import KIND as CALIBRATION

router = APIRouter(prefix="/v1", tags=["runs"])


@router.post("/runs", response_model=RunInfo, status_code=201)
async def create_run(body: RunCreate, hub: HubDep, caller: CallerDep) -> RunInfo:
    """A run of the caller's (with `id`: that run, made unless it is already the caller's). A
    calibration run (`config.kind: calibration`) is shown on every task it played (`/v1/tasks`): on
    a hub with API keys only an admin key records one."""
    if body.config.get("kind") == CALIBRATION and caller.key is not None and not caller.key.admin:
        raise Forbidden("a calibration run (config kind: calibration) sets what every task page shows: "
                        "it needs an admin key")
    return await store_of(hub).run(lambda s: s.create_run(owner=caller.owner, run_id=body.id, config=body.config))


@router.post("/runs/{run_id}/steps", response_model=RunStep, status_code=201)
async def report_step(run_id: str, body: RunStepReport, hub: HubDep, caller: CallerDep) -> RunStep:
    """One trainer step's figures (a step reported again replaces its figures); the run's owner only."""
    return await store_of(hub).run(lambda s: s.report_step(run_id, body, viewer=caller.viewer))


@router.get("/runs", response_model=RunList)
async def list_runs(hub: HubDep, caller: CallerDep, limit: int = Query(default=50, ge=1, le=1000),
                    offset: int = Query(default=0, ge=0, le=MAX_OFFSET)) -> RunList:
    """The caller's runs (every one for an admin key), newest first."""
    rows, total = await store_of(hub).run(lambda s: s.runs(viewer=caller.viewer, limit=limit, offset=offset))
    return RunList(runs=rows, total=total)


@router.get("/runs/{run_id}", response_model=RunDetail)
async def get_run(run_id: str, hub: HubDep, caller: CallerDep) -> RunDetail:
    """One of the caller's runs: its configuration, step reports and figures."""
    run = await store_of(hub).run(lambda s: s.run_detail(run_id, viewer=caller.viewer))
    if run is None:
        raise NotFound(f"no run {run_id!r} in this server's store")
    return run
