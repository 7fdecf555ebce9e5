"""The registry browser's pages: thin handlers over `views`, rendered by `render`.

Query strings are read as plain, length-capped strings and never validated into errors: a
malformed or hostile value is just a filter that matches nothing. The reader of recorded episodes
is whoever the request's `Authorization` names (the public without one; `envhub.store.viewer`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from envhub.errors import NotFound
from envhub.registry import Registry
from envhub.store.viewer import PUBLIC, Viewer
from envhub.web import runs, views
from envhub.web.render import HEADERS, HERE, not_found, page

router = APIRouter(include_in_schema=False)


def get_registry(request: Request) -> Registry:
    """The registry the app factory put in the app's state (the web imports nothing of the server)."""
    return request.app.state.registry


def get_viewer(request: Request) -> Viewer:
    """Who reads the episodes: the app's access policy resolves the credential (401 for a bad one
    where keys are on); without one, or without a policy (a bare app), the public."""
    access = getattr(request.app.state, "access", None)
    if access is None:
        return PUBLIC
    return access.viewer(request.headers.get("authorization"))


RegistryDep = Annotated[Registry, Depends(get_registry)]
ViewerDep = Annotated[Viewer, Depends(get_viewer)]
STATIC = {"app.css": "text/css", "app.js": "text/javascript", "favicon.svg": "image/svg+xml"}
MAX_PARAM = 200


def _params(request: Request) -> dict[str, str]:
    return {k: v[:MAX_PARAM] for k, v in request.query_params.items()}


async def _render(template: str, build: Callable[..., dict[str, Any]], *args: Any, what: str = "page") -> Response:
    """Build the context off the event loop (file hashing, database reads), then render."""
    try:
        context = await asyncio.to_thread(build, *args)
    except NotFound as e:
        return not_found(what, e.detail)
    except views.StoreDown as e:
        return page("404.html", status=503, title="episode store unavailable", what="episode", detail=str(e))
    return page(template, **context)


@router.get("/", response_class=HTMLResponse)
async def home(registry: RegistryDep, viewer: ViewerDep) -> Response:
    return await _render("index.html", views.index, registry, viewer)


@router.get("/envs/{name}", response_class=HTMLResponse)
async def env_detail(name: str, request: Request, registry: RegistryDep, viewer: ViewerDep) -> Response:
    base = str(request.base_url).rstrip("/")  # the snippets name the address the user reached us at
    return await _render("env.html", views.env_page, registry, name, viewer, base, what="environment")


@router.get("/tasks", response_class=HTMLResponse)
async def tasks(request: Request, registry: RegistryDep) -> Response:
    return await _render("tasks.html", views.tasks_page, registry, _params(request))


@router.get("/tasks/{task_id:path}", response_class=HTMLResponse)
async def task_detail(task_id: str, registry: RegistryDep, viewer: ViewerDep) -> Response:
    return await _render("task.html", views.task_page, registry, task_id, viewer, what="task")


@router.get("/episodes", response_class=HTMLResponse)
async def episodes(request: Request, registry: RegistryDep, viewer: ViewerDep) -> Response:
    return await _render("episodes.html", views.episodes_page, registry, _params(request), viewer)


@router.get("/episodes/{episode_id}", response_class=HTMLResponse)
async def episode_detail(episode_id: str, request: Request, registry: RegistryDep, viewer: ViewerDep) -> Response:
    return await _render("episode.html", views.episode_page, registry, episode_id, _params(request), viewer,
                         what="episode")


@router.get("/runs", response_class=HTMLResponse)
async def run_list(request: Request, registry: RegistryDep, viewer: ViewerDep) -> Response:
    return await _render("runs.html", runs.runs_page, registry, _params(request), viewer)


@router.get("/runs/{run_id}", response_class=HTMLResponse)
async def run_detail(run_id: str, registry: RegistryDep, viewer: ViewerDep) -> Response:
    return await _render("run.html", runs.run_page, registry, run_id, viewer, what="run")


@router.get("/static/{name}")
async def static(name: str) -> Response:
    if name not in STATIC:
        return not_found("file", f"no static file {name!r}")
    return FileResponse(HERE / "static" / name, media_type=STATIC[name],
                        headers={**HEADERS, "Cache-Control": "public, max-age=300"})
