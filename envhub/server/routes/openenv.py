"""OpenEnv compatibility: OpenEnv's routes over envhub sessions.

OpenEnv's clients (`openenv.core.GenericEnvClient`, TRL's integration) connect to
`<base>/ws` and send `reset`/`step`/`state`/`close` frames. Here `<base>` is either the server
root (the environment is `env` in the reset data, else `settings.default_env`) or
`/envs/<env>`. Differences from OpenEnv, all additive:

- the reward is given by envhub's verifier: step with the reserved action `{"tool": "submit"}`
  to end the episode and get `reward` and `done: true`; `metadata` holds the agent's view of the
  verdict (`VerifyResult.for_agent`: which checks held, no messages), and the trainer reads the
  whole answer at `POST /v1/sessions/{episode_id}/verify` with the same credentials;
- OpenEnv has one `done`: here it is `terminated or truncated`, and every step answer's `metadata`
  says which (`terminated`: verified; `truncated`: a step or time budget cut the episode off);
- HTTP `/reset` keeps its session alive (leased) and returns its id as `episode_id`; `/step`
  with that `episode_id` continues it, so multi-step episodes also work over plain HTTP
  (OpenEnv's HTTP routes are stateless: without an `episode_id` `/step` behaves the same way,
  on a fresh environment that is closed afterwards).
- access as on envhub's own routes (`envhub.core.auth`): `Authorization: Bearer` on the
  handshake and the HTTP calls (OpenEnv's client takes `headers=`); without keys, HTTP `/reset`
  returns `client_token`, which `/step` and `/state` with that `episode_id` must send.
- wrong shapes and types (`{"env": 5}`, `"seed": "abc"`, `data` that is not an object) are 422
  problems (HTTP) or error frames (WebSocket), never a 500.
"""

from __future__ import annotations

import contextlib
from typing import Any

from fastapi import APIRouter, Body, WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from envhub.core.answers import ResetAnswer, StepAnswer
from envhub.core.auth import Caller
from envhub.core.hub import Hub
from envhub.core.sessions import SessionManager
from envhub.errors import InvalidRequest, RequestError, Unavailable
from envhub.server import frames
from envhub.server.deps import READERS, CallerDep, HubDep
from envhub.server.encoding import dumps_text
from envhub.server.problems import problem_for
from envhub.spec import Observation, ResetRequest, StepRequest, ToolCall, VerifyResult

router = APIRouter(tags=["openenv"])
SUBMIT = "submit"


RESET_FIELDS = ("task_id", "seed", "harness", "policy_version", "run_id")


def _reset_request(hub: Hub, env: str | None, data: Any) -> ResetRequest:
    """A reset from OpenEnv's loose `data` (unknown keys ignored, as OpenEnv does; wrong types: 422)."""
    if not isinstance(data, dict):
        raise InvalidRequest(f"reset data must be an object, not {type(data).__name__}")
    fields = {k: data[k] for k in RESET_FIELDS if data.get(k) is not None}
    try:
        return ResetRequest(env=env or data.get("env") or hub.settings.default_env, **fields)
    except ValidationError as e:
        first = e.errors()[0]
        raise InvalidRequest(f"reset {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def _reset_payload(created: ResetAnswer) -> dict[str, Any]:
    obs = created.observation.model_dump(mode="json")
    obs["metadata"] = {"session_id": created.session_id, "task_id": created.task.id,
                       "tools": [t.model_dump(by_alias=True) for t in created.tools.specs]}
    obs.update(done=False, reward=None)
    payload = {"observation": obs, "reward": None, "done": False, "metadata": obs["metadata"],
               "episode_id": created.session_id}
    if created.client_token is not None:
        payload["client_token"] = created.client_token
    return payload


def _step_payload(result: StepAnswer) -> dict[str, Any]:
    obs = result.observation.model_dump(mode="json")
    # OpenEnv has `done` only (`terminated or truncated`): how the episode ended rides in the metadata.
    meta = {"failure": result.failure.value, "trainable": result.trainable, "terminated": result.terminated,
            "truncated": result.truncated, "step": result.step}
    obs.update(metadata=meta, done=result.done, reward=result.reward)
    return {"observation": obs, "reward": result.reward, "done": result.done, "metadata": meta}


def _verify_payload(result: VerifyResult, truncated: bool) -> dict[str, Any]:
    """Submit's answer, which an agent's harness may show its model: the agent's view of the verdict,
    and how the episode ended (verified: terminated; `truncated` too if a budget had cut it off)."""
    seen = result.for_agent()
    meta = {**seen.model_dump(mode="json"), "terminated": True, "truncated": truncated}
    obs = {"text": f"verified: {seen.text()}", "data": {},
           "is_error": not result.passed, "metadata": meta, "done": True, "reward": result.reward}
    return {"observation": obs, "reward": result.reward, "done": True, "metadata": meta}


async def _step_or_submit(manager: SessionManager, sid: str, action: Any, caller: Caller) -> dict[str, Any]:
    if not isinstance(action, dict):
        raise InvalidRequest(f"an action is {{'tool': NAME, 'arguments': {{...}}}}, not {type(action).__name__}")
    if action.get("tool") == SUBMIT:
        result = await manager.verify(sid, caller)
        return _verify_payload(result, manager.state(sid, caller).truncated)
    try:
        call = ToolCall.model_validate(action)
    except ValidationError as e:
        raise InvalidRequest(f"an action is {{'tool': NAME, 'arguments': {{...}}}}: {e.errors()[0]['msg']}") from None
    return _step_payload(await manager.step(sid, StepRequest(action=call), caller))


WS_CODES = {"unavailable": "CAPACITY_REACHED", "quota_exceeded": "CAPACITY_REACHED", "bad_request": "VALIDATION_ERROR",
            "invalid_request": "VALIDATION_ERROR", "not_found": "VALIDATION_ERROR", "forbidden": "VALIDATION_ERROR",
            "malformed_json": "INVALID_JSON", "binary_frame": "INVALID_JSON", "invalid_unicode": "INVALID_JSON",
            "payload_too_large": "INVALID_JSON"}


def _ws_error(exc: BaseException) -> dict[str, Any]:
    problem = problem_for(exc)
    code = WS_CODES.get(problem.code, "EXECUTION_ERROR")
    return {"type": "error", "data": {"message": problem.detail, "code": code,
                                      "problem": problem.model_dump(mode="json", exclude_none=True)}}


async def _serve_ws(ws: WebSocket, env: str | None) -> None:
    hub: Hub = ws.app.state.hub
    manager = hub.manager
    caller = await frames.accept(ws)
    if caller is None:
        return
    sid: str | None = None
    try:
        while True:
            try:
                msg = await frames.receive_json(ws, hub.settings.max_body_bytes)
                if not isinstance(msg, dict):
                    raise InvalidRequest(f"a message is {{'type': ..., 'data': {{...}}}}, not {type(msg).__name__}")
                kind, data = msg.get("type"), msg.get("data")
                data = {} if data is None else data
                if kind == "reset":
                    if sid is not None:
                        await manager.close(sid, caller)
                        sid = None
                    created = await manager.create(_reset_request(hub, env, data), caller)
                    sid = created.session_id
                    out = {"type": "observation", "data": _reset_payload(created)}
                elif kind == "step":
                    if sid is None:
                        raise RequestError("send a reset first")
                    out = {"type": "observation", "data": await _step_or_submit(manager, sid, data, caller)}
                elif kind == "state":
                    if sid is None:
                        raise RequestError("send a reset first")
                    st = manager.state(sid, caller)
                    out = {"type": "state", "data": {"episode_id": st.session_id, "step_count": st.step_count,
                                                     **st.model_dump(mode="json")}}
                elif kind == "close":
                    break
                else:
                    shown = kind if isinstance(kind, str | None) else type(kind).__name__
                    await ws.send_text(dumps_text({"type": "error", "data": {
                        "message": f"unknown message type {shown!r}", "code": "UNKNOWN_TYPE"}}))
                    continue
                await ws.send_text(dumps_text(out))
            except WebSocketDisconnect:
                raise
            except Exception as exc:
                await ws.send_text(dumps_text(_ws_error(exc)))
                if isinstance(exc, Unavailable):
                    break  # as OpenEnv does at capacity: error frame, then close
    except WebSocketDisconnect:
        pass
    finally:
        if sid is not None:
            await manager.close(sid, caller)
    with contextlib.suppress(RuntimeError, WebSocketDisconnect):
        await ws.close()


@router.websocket("/ws")
async def openenv_ws(ws: WebSocket) -> None:
    await _serve_ws(ws, None)


@router.websocket("/envs/{env}/ws")
async def openenv_env_ws(ws: WebSocket, env: str) -> None:
    await _serve_ws(ws, env)


async def _http_reset(hub: Hub, env: str | None, body: dict[str, Any], caller: Caller) -> dict[str, Any]:
    return _reset_payload(await hub.manager.create(_reset_request(hub, env, body), caller))


async def _http_step(hub: Hub, env: str | None, body: dict[str, Any], caller: Caller) -> dict[str, Any]:
    action = body.get("action")
    if not isinstance(action, dict):
        raise InvalidRequest("body must be {'action': {'tool': NAME, 'arguments': {...}}, 'episode_id'?: ID}")
    sid = body.get("episode_id")
    if sid is not None and not isinstance(sid, str):
        raise InvalidRequest(f"episode_id must be a string, not {type(sid).__name__}")
    if sid:
        return await _step_or_submit(hub.manager, sid, action, caller)
    created = await hub.manager.create(_reset_request(hub, env, body), caller)  # OpenEnv's stateless step
    try:
        return await _step_or_submit(hub.manager, created.session_id, action, caller)
    finally:
        await hub.manager.close(created.session_id, caller)


def _schema(hub: Hub, env: str | None) -> dict[str, Any]:
    family = hub.manager.family(env or hub.settings.default_env)
    return {"action": ToolCall.model_json_schema(),
            "observation": Observation.model_json_schema(), "state": {"type": "object", "properties": {
                "episode_id": {"type": "string"}, "step_count": {"type": "integer"}}},
            "tools": [t.model_dump(by_alias=True) for t in family.tool_specs()]}


def _metadata(hub: Hub, env: str | None) -> dict[str, Any]:
    family = hub.manager.family(env or hub.settings.default_env)
    return {"name": family.name, "description": family.description, "version": "1",
            "author": "envhub", "readme_content": None, "documentation_url": None}


@router.post("/reset")
async def openenv_reset(hub: HubDep, caller: CallerDep,
                        body: dict[str, Any] = Body(default_factory=dict)) -> dict[str, Any]:
    return await _http_reset(hub, None, body, caller)


@router.post("/envs/{env}/reset")
async def openenv_env_reset(env: str, hub: HubDep, caller: CallerDep,
                            body: dict[str, Any] = Body(default_factory=dict)) -> dict:
    return await _http_reset(hub, env, body, caller)


@router.post("/step")
async def openenv_step(hub: HubDep, caller: CallerDep, body: dict[str, Any] = Body(...)) -> dict[str, Any]:
    return await _http_step(hub, None, body, caller)


@router.post("/envs/{env}/step")
async def openenv_env_step(env: str, hub: HubDep, caller: CallerDep,
                           body: dict[str, Any] = Body(...)) -> dict[str, Any]:
    return await _http_step(hub, env, body, caller)


@router.get("/state")
async def openenv_state(hub: HubDep, caller: CallerDep, episode_id: str | None = None) -> dict[str, Any]:
    if not episode_id:
        return {"episode_id": None, "step_count": 0}
    st = hub.manager.state(episode_id, caller)
    return {"episode_id": st.session_id, "step_count": st.step_count, **st.model_dump(mode="json")}


@router.get("/schema", dependencies=READERS)
async def openenv_schema(hub: HubDep) -> dict[str, Any]:
    return _schema(hub, None)


@router.get("/envs/{env}/schema", dependencies=READERS)
async def openenv_env_schema(env: str, hub: HubDep) -> dict[str, Any]:
    return _schema(hub, env)


@router.get("/metadata", dependencies=READERS)
async def openenv_metadata(hub: HubDep) -> dict[str, Any]:
    return _metadata(hub, None)


@router.get("/envs/{env}/metadata", dependencies=READERS)
async def openenv_env_metadata(env: str, hub: HubDep) -> dict[str, Any]:
    return _metadata(hub, env)

