"""`/v1/sessions`: reset, step, verify (and reverify), state, close; each acts as its caller (`envhub.core.auth`)."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from envhub.server.deps import CallerDep, ManagerDep
from envhub.spec import (
    Forked,
    ForkRequest,
    ResetRequest,
    Reverified,
    SessionCreated,
    SessionState,
    SnapshotInfo,
    StepRequest,
    StepResult,
    VerifyResult,
)

router = APIRouter(prefix="/v1/sessions", tags=["sessions"])


@router.post("", status_code=status.HTTP_201_CREATED, response_model=SessionCreated)
async def create_session(req: ResetRequest, manager: ManagerDep, caller: CallerDep) -> SessionCreated:
    """Reset: start an episode of `env` on a task; answers 503 + Retry-After at capacity."""
    return (await manager.create(req, caller)).model()


@router.post("/{session_id}/step", response_model=StepResult)
async def step(session_id: str, req: StepRequest, manager: ManagerDep, caller: CallerDep) -> StepResult:
    """Run one tool call. A bad action is an `agent_error` observation here, not a 4xx."""
    return (await manager.step(session_id, req, caller)).model()


@router.post("/{session_id}/fork", status_code=status.HTTP_201_CREATED, response_model=Forked)
async def fork(session_id: str, manager: ManagerDep, caller: CallerDep, req: ForkRequest | None = None) -> Forked:
    """`n` new sessions of the caller's, each a copy of this one at its current step, with its step
    log so far (the verifier judges a fork's whole path); this one goes on unchanged. `409` once the
    episode is over, `501` for a family that cannot copy its live state, `503` past capacity."""
    answers = await manager.fork(session_id, req or ForkRequest(), caller)
    return Forked(sessions=[a.model() for a in answers])


@router.post("/{session_id}/snapshot", status_code=status.HTTP_201_CREATED, response_model=SnapshotInfo)
async def snapshot(session_id: str, manager: ManagerDep, caller: CallerDep) -> SnapshotInfo:
    """Keep a copy of this live episode at its current step (state and step log, on disk until it
    expires), which `POST /v1/sessions {"from_snapshot": id}` starts from; this one goes on
    unchanged. `409` once the episode is over, `501` for a family that cannot copy its live state,
    `429` past the caller's snapshot quota."""
    return await manager.snapshot(session_id, caller)


@router.post("/{session_id}/verify", response_model=VerifyResult)
async def verify(session_id: str, manager: ManagerDep, caller: CallerDep, keep_state: bool = False) -> VerifyResult:
    """Freeze the episode and judge its final state (idempotent: a repeat returns the same verdict).
    `keep_state=true` keeps a copy of the state judged, for `reverify`."""
    return await manager.verify(session_id, caller, keep_state=keep_state)


@router.post("/{session_id}/reverify", response_model=Reverified)
async def reverify(session_id: str, manager: ManagerDep, caller: CallerDep) -> Reverified:
    """Judge a verified episode's final state a second time (a run's verifier disagreement): both
    verdicts and whether they differ; the episode keeps its first. `409` before verify, or when the
    verify did not keep its state (`keep_state=true`)."""
    return await manager.reverify(session_id, caller)


@router.get("/{session_id}", response_model=SessionState)
async def get_session(session_id: str, manager: ManagerDep, caller: CallerDep) -> SessionState:
    return manager.state(session_id, caller)


@router.delete("/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
async def close_session(session_id: str, manager: ManagerDep, caller: CallerDep) -> Response:
    """Close (idempotent: closing an unknown or closed session, or another caller's, is a no-op 204)."""
    await manager.close(session_id, caller)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
