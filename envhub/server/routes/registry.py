"""`/v1/envs` and `/v1/tasks`: what exists and how healthy it is; never hidden task files."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Query

from envhub import harness
from envhub.errors import NotFound
from envhub.server.deps import HubDep
from envhub.server.hub import Hub
from envhub.spec import EnvInfo, EnvList, HarnessStats, MissingRequirement, TaskInfo, TaskList, ValidationSummary
from envhub.tasks.model import Task

router = APIRouter(prefix="/v1", tags=["registry"])


def task_info(hub: Hub, task: Task) -> TaskInfo:
    record = task.validation_record() or {}
    summary = {k: v for k, v in record.items() if k in ("validated_at", "checks", "runs", "rejections", "timings")}
    return TaskInfo(id=task.id, env=task.family, title=task.config.title, prompt=task.prompt,
                    difficulty=task.config.difficulty, tags=task.config.tags, metadata=task.config.metadata,
                    validation=ValidationSummary(status=hub.catalog.status(task), **summary),
                    unavailable=hub.families[task.family].availability(task))


def family_availability(hub: Hub, name: str) -> tuple[str, MissingRequirement | None, int]:
    """Whether a family can run here ("available", "partial" or "unavailable"), what it lacks, and
    how many of its tasks cannot run."""
    family = hub.manager.family(name)
    tasks = hub.catalog.for_family(name)
    lacking = [m for m in (family.availability(t) for t in tasks) if m is not None]
    cannot = len(lacking)
    missing = family.availability()
    if missing is None and lacking:  # the family says nothing itself: sum up its tasks' reasons
        missing = MissingRequirement(reason="; ".join(dict.fromkeys(m.reason for m in lacking)),
                                     fix=" && ".join(dict.fromkeys(m.fix for m in lacking)))
    if (tasks and cannot == len(tasks)) or (missing and not tasks):
        return "unavailable", missing, cannot
    return ("partial" if cannot or missing else "available"), missing, cannot


def env_info(hub: Hub, name: str) -> EnvInfo:
    family = hub.manager.family(name)
    tasks = hub.catalog.for_family(name)
    statuses = [hub.catalog.status(t) for t in tasks]
    availability, missing, cannot = family_availability(hub, name)
    return EnvInfo(name=name, description=family.description, task_count=len(tasks),
                   validated=statuses.count("validated"), rejected=statuses.count("rejected"),
                   tools=(specs := family.tool_specs()), availability=availability, unavailable=missing,
                   unavailable_tasks=cannot, harnesses=harness.support(name, {t.name for t in specs}))


@router.get("/envs", response_model=EnvList)
async def list_envs(hub: HubDep) -> EnvList:
    return EnvList(envs=[env_info(hub, name) for name in hub.families])


@router.get("/envs/{env}", response_model=EnvInfo)
async def get_env(env: str, hub: HubDep) -> EnvInfo:
    return env_info(hub, env)


@router.get("/tasks", response_model=TaskList)
async def list_tasks(hub: HubDep, env: str | None = None, tag: str | None = None,
                     difficulty: str | None = None, status: str | None = Query(default=None, alias="validation"),
                     q: str | None = Query(default=None, max_length=200), limit: int = Query(default=500, ge=1, le=5000),
                     offset: int = Query(default=0, ge=0)) -> TaskList:
    tasks = [t for t in hub.catalog.filter(env=env, tag=tag, difficulty=difficulty, status=status, text=q)
             if t.family in hub.families]
    return TaskList(tasks=[task_info(hub, t) for t in tasks[offset:offset + limit]], total=len(tasks))


@router.get("/tasks/{task_id:path}", response_model=TaskInfo)
async def get_task(task_id: str, hub: HubDep) -> TaskInfo:
    task = hub.catalog.get(task_id)
    if task.family not in hub.families:
        raise NotFound(f"task {task_id!r} belongs to {task.family!r}, which this server does not serve")
    info = task_info(hub, task)
    if hub.store is not None:
        stats = await asyncio.to_thread(hub.store.by_harness, task_id=task.id)
        info.by_harness = {h: HarnessStats(**r) for h, r in stats.items()}
    return info
