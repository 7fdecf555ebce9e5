"""Sessions: one `Session` object per live episode, owned by the `SessionManager`.

Everything stateful about serving lives here: capacity and leases, deadlines, idempotent steps,
failure classification, the step log the verifier reads, and verification itself. Routes (HTTP,
WebSocket, OpenEnv) are thin translations onto these methods. No thread per session: an
environment is a set of coroutines, serialised by the session's lock.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import shutil
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from envhub.config import Settings
from envhub.env import EnvContext, Environment, Family
from envhub.errors import (
    AgentError,
    AgentTimeout,
    EnvError,
    EnvhubError,
    FailureClass,
    NotFound,
    RequestError,
    RequirementMissing,
    Unavailable,
)
from envhub.sandbox.base import SandboxBackend
from envhub.server import metrics
from envhub.spec import (
    Observation,
    ResetRequest,
    SessionCreated,
    SessionState,
    StepRequest,
    StepResult,
    TaskRef,
    ToolCall,
    VerifyResult,
)
from envhub.tasks.catalog import Catalog
from envhub.tasks.model import Task
from envhub.verify.runner import VerifierRunner, verdict

log = logging.getLogger("envhub.sessions")

STEP_GRACE_S = 10.0  # an environment gets this long past the task's step limit before it is a fault
LOGGED_TEXT = 4000  # characters of each observation kept in the step log


class EpisodeObserver(Protocol):
    """Receives episode events (the episode store). Methods must not block: queue and return."""

    def session_created(self, session: Session) -> None: ...
    def step_done(self, session: Session, entry: dict[str, Any]) -> None: ...
    def verified(self, session: Session, result: VerifyResult) -> None: ...
    def session_closed(self, session: Session) -> None: ...


@dataclass(eq=False)
class Session:
    id: str
    family: Family
    env: Environment
    task: Task
    lease_s: float
    harness: str
    policy_version: str | None
    workdir: Path
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    last_used: float = field(default_factory=time.monotonic)
    started: float = field(default_factory=time.monotonic)
    step_count: int = 0
    done: bool = False
    broken: EnvError | None = None
    result: VerifyResult | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    answers: OrderedDict[str, StepResult] = field(default_factory=OrderedDict)
    log: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    closed: bool = False

    @property
    def lease_expires_at(self) -> datetime:
        idle = time.monotonic() - self.last_used
        return datetime.now(UTC) + timedelta(seconds=max(0.0, self.lease_s - idle))

    def touch(self) -> None:
        self.last_used = time.monotonic()


class _SessionIds:
    """Unguessable session ids, drawing OS randomness in blocks (one getrandom per id is slow here)."""

    def __init__(self) -> None:
        self._pool = b""

    def next(self) -> str:
        if len(self._pool) < 12:
            self._pool = os.urandom(12 * 256)
        raw, self._pool = self._pool[:12], self._pool[12:]
        return base64.urlsafe_b64encode(raw).decode()


class SessionManager:
    def __init__(self, settings: Settings, families: dict[str, Family], catalog: Catalog,
                 backend: SandboxBackend, verifier: VerifierRunner) -> None:
        self.settings = settings
        self.families = families
        self.catalog = catalog
        self.backend = backend
        self.verifier = verifier
        self.sessions: dict[str, Session] = {}
        self.observers: list[EpisodeObserver] = []
        self._reserved = 0
        self._ids = _SessionIds()
        self._sessions_root: Path | None = None
        self._reaper: asyncio.Task[None] | None = None

    # -- lifecycle --------------------------------------------------------------------------------
    async def start(self) -> None:
        self._reaper = asyncio.create_task(self._reap_forever(), name="envhub-reaper")

    async def stop(self) -> None:
        if self._reaper:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        await asyncio.gather(*(self.close(sid) for sid in list(self.sessions)), return_exceptions=True)

    def _notify(self, method: str, *args: Any) -> None:
        for obs in self.observers:
            try:
                getattr(obs, method)(*args)
            except Exception:  # an observer must never break serving
                log.exception("episode observer %s failed in %s", type(obs).__name__, method)

    # -- capacity ---------------------------------------------------------------------------------
    @property
    def active(self) -> int:
        return len(self.sessions) + self._reserved

    def capacity(self) -> tuple[int, int]:
        return self.settings.max_sessions, self.active

    # -- operations -------------------------------------------------------------------------------
    def get(self, session_id: str) -> Session:
        try:
            return self.sessions[session_id]
        except KeyError:
            raise NotFound(f"unknown session {session_id!r} (closed, reaped, or never created)",
                           kind="session", name=session_id) from None

    def family(self, name: str) -> Family:
        try:
            return self.families[name]
        except KeyError:
            raise NotFound.for_name("environment", name, self.families) from None

    async def create(self, req: ResetRequest) -> SessionCreated:
        family = self.family(req.env)
        task = (self.catalog.get(req.task_id) if req.task_id
                else self.catalog.sample(req.env, req.seed, keep=lambda t: family.availability(t) is None))
        if task.family != family.name:
            raise RequestError(f"task {task.id!r} belongs to {task.family!r}, not {req.env!r}")
        if (missing := family.availability(task)) is not None:  # before any sandbox is made
            raise RequirementMissing(f"{task.id} cannot run on this server: {missing.reason}; fix: {missing.fix}",
                                     retry_after_s=60, reason=missing.reason, fix=missing.fix)
        if self.active >= self.settings.max_sessions:  # refuse before taking any resource
            metrics.REFUSED.inc()
            raise Unavailable(f"at capacity: {self.active}/{self.settings.max_sessions} sessions", retry_after_s=1.0)
        self._reserved += 1
        started = time.monotonic()
        sid = self._ids.next()
        workdir = self._sessions_dir() / sid
        if family.uses_workdir:
            workdir.mkdir(mode=0o755)  # sandboxes run as other uids and must reach the exported state
        env: Environment | None = None
        try:
            env = family.make(EnvContext(settings=self.settings, sandbox=self.backend, workdir=workdir,
                                         session_id=sid))
            async with asyncio.timeout(task.config.limits.step_timeout_s + STEP_GRACE_S):
                observation = await env.reset(task=task, seed=req.seed)
        except BaseException as exc:
            if env is not None:
                with contextlib.suppress(Exception):
                    await env.close()
            shutil.rmtree(workdir, ignore_errors=True)
            if isinstance(exc, asyncio.TimeoutError):
                raise EnvError(f"reset of {task.id} did not finish in time") from exc
            if isinstance(exc, EnvhubError | asyncio.CancelledError):
                raise
            log.exception("reset failed for %s", task.id)
            raise EnvError(f"reset of {task.id} failed: {exc}") from exc
        finally:
            self._reserved -= 1
        session = Session(id=sid, family=family, env=env, task=task, workdir=workdir,
                          lease_s=req.lease_s or self.settings.lease_s, harness=req.harness or "plain",
                          policy_version=req.policy_version)
        session.timings["reset_s"] = time.monotonic() - started
        self.sessions[sid] = session
        metrics.SESSIONS.labels(family.name).inc()
        metrics.LATENCY.labels("reset", family.name).observe(session.timings["reset_s"])
        self._notify("session_created", session)
        return SessionCreated(session_id=sid, env=family.name, observation=observation, tools=env.tools(),
                              task=TaskRef(id=task.id, prompt=task.prompt), lease_expires_at=session.lease_expires_at)

    def _sessions_dir(self) -> Path:
        if self._sessions_root is None:
            self._sessions_root = self.settings.data_dir / "sessions"
            self._sessions_root.mkdir(parents=True, exist_ok=True)
        return self._sessions_root

    async def step(self, session_id: str, req: StepRequest) -> StepResult:
        session = self.get(session_id)
        session.touch()
        key = req.idempotency_key
        if key is not None and key in session.answers:
            return session.answers[key]
        async with session.lock:
            if key is not None and key in session.answers:  # the same key raced us here
                return session.answers[key]
            result = await self._step_locked(session, req.action)
            if key is not None:
                session.answers[key] = result
                while len(session.answers) > self.settings.idempotency_cache:
                    session.answers.popitem(last=False)
        session.touch()
        return result

    async def _step_locked(self, session: Session, action: ToolCall) -> StepResult:
        if session.result is not None or session.closed:
            raise RequestError("the episode is over: it was verified; start a new session", code="episode_over")
        limits = session.task.config.limits
        started = time.monotonic()
        if session.broken is not None:
            return self._answer(session, action, Observation(text=f"environment fault: {session.broken.detail}",
                                                             is_error=True), FailureClass.env_error, started)
        if session.step_count >= limits.max_steps:
            return self._answer(session, action, Observation(
                text=f"step budget of {limits.max_steps} exhausted; call verify", is_error=True),
                FailureClass.agent_timeout, started, truncated=True)
        if time.monotonic() - session.started > limits.episode_timeout_s:
            return self._answer(session, action, Observation(
                text=f"episode time budget of {limits.episode_timeout_s:g}s exhausted; call verify", is_error=True),
                FailureClass.agent_timeout, started, truncated=True)
        try:
            async with asyncio.timeout(limits.step_timeout_s + STEP_GRACE_S):  # no extra task per step
                obs = await session.env.step(action)
            failure = FailureClass.agent_timeout if obs.data.get("timed_out") else FailureClass.ok
        except AgentError as e:
            obs, failure = Observation(text=f"error: {e.detail}", is_error=True, data={"code": e.code}), \
                FailureClass.agent_error
        except AgentTimeout as e:
            obs, failure = Observation(text=f"timeout: {e.detail}", is_error=True), FailureClass.agent_timeout
        except (TimeoutError, EnvError, OSError) as e:
            session.broken = e if isinstance(e, EnvError) else EnvError(f"the environment did not answer: {e!r}")
            log.warning("session %s: environment fault: %s", session.id, session.broken.detail)
            obs, failure = Observation(text=f"environment fault: {session.broken.detail}", is_error=True), \
                FailureClass.env_error
        except Exception as e:  # a bug in a family is an environment fault, never the agent's
            log.exception("session %s: step crashed", session.id)
            session.broken = EnvError(f"step crashed: {type(e).__name__}: {e}")
            obs, failure = Observation(text=f"environment fault: {session.broken.detail}", is_error=True), \
                FailureClass.env_error
        return self._answer(session, action, obs, failure, started)

    def _answer(self, session: Session, action: ToolCall, obs: Observation, failure: FailureClass, started: float,
                truncated: bool = False) -> StepResult:
        session.step_count += 1
        elapsed = time.monotonic() - started
        if truncated:
            session.done = True
        entry = {"step": session.step_count, "action": action.model_dump(),
                 "observation": {"text": obs.text[:LOGGED_TEXT], "is_error": obs.is_error, "data": obs.data},
                 "failure": failure.value, "elapsed_s": round(elapsed, 6)}
        session.log.append(entry)
        metrics.STEPS.labels(session.family.name, failure.value).inc()
        metrics.LATENCY.labels("step", session.family.name).observe(elapsed)
        self._notify("step_done", session, entry)
        return StepResult(observation=obs, reward=None, done=session.done, truncated=truncated, failure=failure,
                          trainable=failure.trainable, retryable=failure.retryable, step=session.step_count,
                          info={"elapsed_s": round(elapsed, 6)})

    async def verify(self, session_id: str) -> VerifyResult:
        session = self.get(session_id)
        session.touch()
        async with session.lock:
            if session.result is None:
                session.result = await self._verify_locked(session)
                session.done = True
                metrics.VERIFIES.labels(session.family.name, session.result.failure_class.value).inc()
                metrics.LATENCY.labels("verify", session.family.name).observe(
                    session.result.timings.get("total_s", 0.0))
                self._notify("verified", session, session.result)
                with contextlib.suppress(Exception):
                    await session.env.close()  # free the sandbox now; the session record stays
        return session.result

    async def _verify_locked(self, session: Session) -> VerifyResult:
        started = time.monotonic()
        task = session.task
        if session.broken is not None:
            return verdict(task, failure=FailureClass.env_error, detail=session.broken.detail)
        session.workdir.mkdir(mode=0o755, exist_ok=True)
        state = session.workdir / "final-state"
        try:
            await asyncio.wait_for(session.env.export_state(state), timeout=task.config.limits.verify_timeout_s)
        except (TimeoutError, EnvError, OSError) as e:
            detail = e.detail if isinstance(e, EnvError) else f"exporting the final state failed: {e!r}"
            return verdict(task, failure=FailureClass.env_error, detail=detail)
        except Exception as e:
            log.exception("session %s: export crashed", session.id)
            return verdict(task, failure=FailureClass.env_error, detail=f"export crashed: {e!r}")
        export_s = time.monotonic() - started
        result = await self.judge(task, state, session.log)
        result.timings.update(export_s=round(export_s, 4), total_s=round(time.monotonic() - started, 4))
        return result

    async def judge(self, task: Task, state: Path, trajectory: list[dict[str, Any]]) -> VerifyResult:
        """Run the verifier over an exported state; crashes of the runner itself are verifier errors."""
        try:
            return await self.verifier.verify(task, state, trajectory)
        except EnvhubError as e:
            failure = e.failure_class or FailureClass.verifier_error
            return verdict(task, failure=failure, detail=e.detail)
        except Exception as e:
            log.exception("verifier runner crashed for %s", task.id)
            return verdict(task, failure=FailureClass.verifier_error, detail=f"verifier runner crashed: {e!r}")

    def state(self, session_id: str) -> SessionState:
        s = self.get(session_id)
        s.touch()
        return SessionState(session_id=s.id, env=s.family.name, task_id=s.task.id, step_count=s.step_count,
                            done=s.done, created_at=s.created_at, lease_expires_at=s.lease_expires_at,
                            verified=s.result is not None)

    async def close(self, session_id: str) -> None:
        """Close a session; unknown ids are fine (idempotent)."""
        session = self.sessions.pop(session_id, None)
        if session is None:
            return
        session.closed = True
        metrics.SESSIONS.labels(session.family.name).dec()
        try:
            await asyncio.wait_for(session.env.close(), timeout=30)
        except Exception:
            log.exception("session %s: close failed", session.id)
        if session.workdir.exists():
            await asyncio.to_thread(shutil.rmtree, session.workdir, True)
        self._notify("session_closed", session)

    # -- reaper -----------------------------------------------------------------------------------
    async def reap_once(self) -> int:
        now = time.monotonic()
        stale = [s.id for s in self.sessions.values() if now - s.last_used > s.lease_s and not s.lock.locked()]
        for sid in stale:
            log.info("reaping idle session %s", sid)
            await self.close(sid)
        return len(stale)

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.reap_interval_s)
            try:
                await self.reap_once()
            except Exception:
                log.exception("reaper pass failed")


