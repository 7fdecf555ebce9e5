"""`/v1/envs` and `/v1/tasks`: what exists and how healthy it is; never hidden task files.
Thin handlers over `envhub.registry`, which the web pages use too."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Query

from envhub.errors import NotFound
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
                     q: str | None = Query(default=None, max_length=200), limit: int = Query(default=500, ge=1, le=5000),
                     offset: int = Query(default=0, ge=0)) -> TaskList:
    tasks = hub.registry.tasks(env=env, tag=tag, difficulty=difficulty, status=status, text=q)
    return TaskList(tasks=[hub.registry.task_info(t) for t in tasks[offset:offset + limit]], total=len(tasks))


@router.get("/tasks/{task_id:path}", response_model=TaskInfo)
async def get_task(task_id: str, hub: HubDep) -> TaskInfo:
    task = hub.catalog.get(task_id)
    if task.family not in hub.families:
        raise NotFound(f"task {task_id!r} belongs to {task.family!r}, which this server does not serve")
    info = hub.registry.task_info(task)
    if hub.store is not None:
        stats = await asyncio.to_thread(hub.store.by_harness, task_id=task.id)
        info.by_harness = {h: HarnessStats(**r) for h, r in stats.items()}
    return info
