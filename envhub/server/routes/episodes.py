"""`/v1/episodes`: the episode store over HTTP, filterable as the page and `envhub episodes` are."""

from __future__ import annotations

from fastapi import APIRouter, Query

from envhub.errors import NotFound
from envhub.server.deps import HubDep
from envhub.server.hub import Hub
from envhub.spec import EpisodeDetail, EpisodeList
from envhub.store import EpisodeStore

router = APIRouter(prefix="/v1", tags=["episodes"])


def _store(hub: Hub) -> EpisodeStore:
    if hub.store is None:
        raise NotFound("this server records no episodes (ENVHUB_STORE_ENABLED is off)")
    return hub.store


@router.get("/episodes", response_model=EpisodeList)
async def list_episodes(hub: HubDep, env: str | None = None, task_id: str | None = None,
                        policy_version: str | None = None, harness: str | None = None,
                        failure_class: str | None = Query(default=None, description="Or 'unverified'."),
                        limit: int = Query(default=50, ge=1, le=1000),
                        offset: int = Query(default=0, ge=0)) -> EpisodeList:
    rows, total = await _store(hub).run(lambda s: s.episodes(
        env=env, task_id=task_id, policy_version=policy_version, harness=harness, failure_class=failure_class,
        limit=limit, offset=offset))
    return EpisodeList(episodes=[r.model_dump() for r in rows], total=total)


@router.get("/episodes/{episode_id}", response_model=EpisodeDetail)
async def get_episode(episode_id: str, hub: HubDep, step_offset: int = Query(default=0, ge=0),
                      step_limit: int = Query(default=1000, ge=1, le=10_000)) -> EpisodeDetail:
    def read(s: EpisodeStore):
        return s.episode(episode_id), s.steps(episode_id, offset=step_offset, limit=step_limit)

    episode, (steps, steps_total) = await _store(hub).run(read)
    if episode is None:
        raise NotFound(f"no episode {episode_id!r} in this server's store")
    return EpisodeDetail(**episode.model_dump(), steps=[s.model_dump() for s in steps], steps_total=steps_total)
