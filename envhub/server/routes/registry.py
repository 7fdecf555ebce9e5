"""`/v1/envs` and `/v1/tasks`: what exists and how healthy it is; never hidden task files.
Thin handlers over `envhub.registry`, which the web pages use too."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Query

from envhub.errors import NotFound
from envhub.registry import by_calibration
from envhub.server.deps import HubDep
from envhub.spec import EnvInfo, EnvList, HarnessStats, TaskInfo, TaskList

router = APIRouter(prefix="/v1", tags=["registry"])


@router.get("/envs", response_model=EnvList)
async def list_envs(hub: HubDep) -> EnvList:
    return EnvList(envs=[hub.registry.env_info(name) for name in hub.families])


@router.get("/envs/{env}", response_model=EnvInfo)
async def get_env(env: str, hub: HubDep) -> EnvInfo:
    return hub.registry.env_info(env)


@router.get("/tasks", response_model=TaskList)
async def list_tasks(hub: HubDep, env: str | None = None, tag: str | None = None,
                     difficulty: str | None = None, status: str | None = Query(default=None, alias="validation"),
                     q: str | None = Query(default=None, max_length=200),
                     calibrated: bool | None = Query(default=None, description=(
                         "Only tasks with (true) or without (false) a calibration (`envhub calibrate`).")),
                     pass_at_k_min: float | None = Query(default=None, ge=0, le=1, description=(
                         "Only calibrated tasks whose pass@k is at least this (0 to 1).")),
                     pass_at_k_max: float | None = Query(default=None, ge=0, le=1, description=(
                         "Only calibrated tasks whose pass@k is at most this: the hard ones for that policy.")),
                     limit: int = Query(default=500, ge=1, le=5000), offset: int = Query(default=0, ge=0)) -> TaskList:
    """Tasks matching every filter. `difficulty` is the task's declared easy/medium/hard; the measured
    difficulty is `calibration` (pass@k of a policy), filtered by `calibrated` and `pass_at_k_min/max`."""
    registry = hub.registry
    tasks = registry.tasks(env=env, tag=tag, difficulty=difficulty, status=status, text=q)
    filtering = calibrated is not None or pass_at_k_min is not None or pass_at_k_max is not None
    # one read of the store: every matching task's calibration to filter on, else the page's only
    calibrations = await asyncio.to_thread(registry.calibrations, tasks if filtering else tasks[offset:offset + limit])
    if filtering:
        tasks = by_calibration(tasks, calibrations, calibrated=calibrated, pass_at_k_min=pass_at_k_min,
                               pass_at_k_max=pass_at_k_max)
    page = tasks[offset:offset + limit]
    return TaskList(tasks=[registry.task_info(t, calibrations.get(t.id)) for t in page], total=len(tasks))


@router.get("/tasks/{task_id:path}", response_model=TaskInfo)
async def get_task(task_id: str, hub: HubDep) -> TaskInfo:
    task = hub.catalog.get(task_id)
    if task.family not in hub.families:
        raise NotFound(f"task {task_id!r} belongs to {task.family!r}, which this server does not serve")
    calibration = (await asyncio.to_thread(hub.registry.calibrations, [task])).get(task.id)
    info = hub.registry.task_info(task, calibration)
    if hub.store is not None:
        stats = await asyncio.to_thread(hub.store.by_harness, task_id=task.id)
        info.by_harness = {h: HarnessStats(**r) for h, r in stats.items()}
    return info
