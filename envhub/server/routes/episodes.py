"""`/v1/episodes`: the episode store over HTTP, filterable as the page and `envhub episodes` are.

An episode is its owner's (`envhub.store.viewer`): the list holds the caller's own episodes (every
one for an admin key), and another caller's episode is unknown (404), as an unknown id is. What
anyone may read, without a key where public reads are on, is `/v1/episodes/summary`: counts,
rewards, failure classes and timings.
"""

from __future__ import annotations

from fastapi import APIRouter, Query

from envhub.core.hub import Hub
from envhub.errors import NotFound
from envhub.server.deps import READERS, CallerDep, HubDep
from envhub.spec import EpisodeDetail, EpisodeList
from envhub.store import EpisodeStore
from envhub.store.schemas import EpisodeAggregate

router = APIRouter(prefix="/v1", tags=["episodes"])
MAX_OFFSET = 2**62  # what every database's integer holds: a larger offset is a 422, not a crash
#: The aggregates: read-only and public where `ENVHUB_PUBLIC_READS` allows it (mounted with READERS).
public_router = APIRouter(prefix="/v1", tags=["episodes"], dependencies=READERS)


def store_of(hub: Hub) -> EpisodeStore:
    if hub.store is None:
        raise NotFound("this server records no episodes (ENVHUB_STORE_ENABLED is off)")
    return hub.store


@public_router.get("/episodes/summary", response_model=EpisodeAggregate)
async def summary(hub: HubDep, env: str | None = None, task_id: str | None = None) -> EpisodeAggregate:
    """Every recorded episode that matches, whoever ran it, as aggregates only."""
    return await store_of(hub).run(lambda s: s.aggregate(env=env, task_id=task_id))


@router.get("/episodes", response_model=EpisodeList)
async def list_episodes(hub: HubDep, caller: CallerDep, env: str | None = None, task_id: str | None = None,
                        policy_version: str | None = None, harness: str | None = None, run_id: str | None = None,
                        failure_class: str | None = Query(default=None, description="Or 'unverified'."),
                        limit: int = Query(default=50, ge=1, le=1000),
                        offset: int = Query(default=0, ge=0, le=MAX_OFFSET)) -> EpisodeList:
    """The caller's episodes (every one for an admin key), newest first."""
    rows, total = await store_of(hub).run(lambda s: s.episodes(
        viewer=caller.viewer, env=env, task_id=task_id, policy_version=policy_version, harness=harness,
        run_id=run_id, failure_class=failure_class, limit=limit, offset=offset))
    return EpisodeList(episodes=[r.model_dump() for r in rows], total=total)


@router.get("/episodes/{episode_id}", response_model=EpisodeDetail)
async def get_episode(episode_id: str, hub: HubDep, caller: CallerDep,
                      step_offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
                      step_limit: int = Query(default=1000, ge=1, le=10_000)) -> EpisodeDetail:
    """One of the caller's episodes with its checks and trajectory (a system run's trajectory: admins only)."""
    viewer = caller.viewer

    def read(s: EpisodeStore):
        return s.episode(episode_id, viewer=viewer), s.steps(episode_id, viewer=viewer, offset=step_offset,
                                                             limit=step_limit)

    episode, (steps, steps_total) = await store_of(hub).run(read)
    if episode is None:
        raise NotFound(f"no episode {episode_id!r} in this server's store")
    return EpisodeDetail(**episode.model_dump(), steps=[s.model_dump() for s in steps], steps_total=steps_total)
