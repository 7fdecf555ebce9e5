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
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from envhub import harness
from envhub.config import Settings
from envhub.core import metrics
from envhub.core.answers import ResetAnswer, StepAnswer, ToolList
from envhub.core.deadlines import Deadlines
from envhub.core.faults import FaultInjector
from envhub.core.snapshots import SnapshotStore
from envhub.env import EnvContext, Environment, Family
from envhub.episode import EpisodeHeader, StepEntry, trajectory
from envhub.errors import (
    AgentError,
    AgentTimeout,
    Conflict,
    EnvError,
    EnvhubError,
    EpisodeOver,
    FailureClass,
    IdempotencyConflict,
    NotFound,
    QuotaExceeded,
    RequestError,
    RequirementMissing,
    Unavailable,
)
from envhub.harness import Skin
from envhub.registry import invalid_reason
from envhub.sandbox.base import SandboxBackend
from envhub.sandbox.process import copy_tree
from envhub.spec import (
    ForkRequest,
    Observation,
    ResetRequest,
    Reverified,
    SessionState,
    SnapshotInfo,
    SnapshotList,
    StepRequest,
    TaskRef,
    ToolCall,
    VerdictOutcome,
    VerifyResult,
)
from envhub.tasks.catalog import Catalog
from envhub.tasks.model import Task
from envhub.tools import Tool, find, show
from envhub.verify.runner import VerifierRunner
from envhub.verify.verdict import verdict

if TYPE_CHECKING:
    from envhub.core.auth import Caller

log = logging.getLogger("envhub.sessions")

#: The deadline ladder: a command gets the task's step limit; the sandbox then kills what it
#: started and gives its shell `envhub.sandbox.shell.SHELL_GRACE_S` to report back (a shell that
#: does not is wedged by the agent: `agent_timeout`); only an environment still silent this long
#: past the step limit is a fault of its own (`env_error`). Each rung must exceed the one below.
STEP_GRACE_S = 15.0
#: How many times `reverify` judges one episode's kept state: each is a whole verifier run.
MAX_REVERIFIES = 2


class EpisodeObserver(Protocol):
    """Receives episode events (the episode store). Methods must not block: queue and return."""

    def session_created(self, session: Session) -> None: ...
    def step_done(self, session: Session, entry: StepEntry) -> None: ...
    def verified(self, session: Session, result: VerifyResult) -> None: ...
    def reverified(self, session: Session, result: Reverified) -> None: ...
    def session_closed(self, session: Session) -> None: ...


@dataclass(eq=False, slots=True)  # slots: thousands live at once; no per-instance __dict__
class Session:
    id: str
    family: Family
    env: Environment
    task: Task
    lease_s: float
    harness: str
    policy_version: str | None
    sessions_dir: Path  # the session's scratch folder (`workdir`) is in here
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    last_used: float = field(default_factory=time.monotonic)
    started: float = field(default_factory=time.monotonic)
    step_count: int = 0
    #: How the episode ended, as Gymnasium means it: `terminated` at a terminal state of the task (it
    #: was verified), `truncated` when a budget (steps, episode time) cut it off first. Both stay set.
    terminated: bool = False
    truncated: bool = False
    broken: EnvError | None = None
    #: The harness skin's tools (what the agent calls) and the family's own (what the skin calls).
    tools: dict[str, Tool] = field(default_factory=dict)
    canonical: dict[str, Tool] = field(default_factory=dict)
    skin: Skin | None = None
    result: VerifyResult | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    answers: dict[str, tuple[ToolCall, StepAnswer]] = field(default_factory=dict)  # oldest first
    owner: str | None = None  # the creator (envhub.core.auth.Caller.owner); None = in-process
    run_id: str | None = None  # the training run the reset named (recorded with the episode)
    parent_id: str | None = None  # the session this one was forked from, at its step `forked_at_step`
    forked_at_step: int | None = None
    log: list[StepEntry] = field(default_factory=list)  # the step log the verifier reads
    timings: dict[str, float] = field(default_factory=dict)
    closed: bool = False
    #: Whether `workdir` may exist (made at reset or verify): most sessions never touch the disk.
    has_workdir: bool = False
    #: A copy of the final state verify judged (in `workdir`, until close), kept when the verify
    #: asked (`keep_state`: the verifier consumes what it judges), for `reverify`; else None.
    final_state: Path | None = None
    reverifies: int = 0  # times `reverify` judged the kept state (at most `MAX_REVERIFIES`)
    #: Who ran what (`envhub.spec.EpisodeHeader`, the one declaration), and its fields as the one
    #: dict every store event carries, merged into each.
    header: EpisodeHeader = field(init=False)
    header_fields: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        # Validated once per session: a field added to the declaration and not given here fails every reset.
        self.header = EpisodeHeader(id=self.id, env=self.family.name, task_id=self.task.id, harness=self.harness,
                                    policy_version=self.policy_version, run_id=self.run_id,
                                    created_at=self.created_at, parent_id=self.parent_id,
                                    forked_at_step=self.forked_at_step)
        self.header_fields = dict(self.header)

    @property
    def workdir(self) -> Path:
        return self.sessions_dir / self.id

    @property
    def done(self) -> bool:
        """The episode is over, either way (OpenEnv's `done`)."""
        return self.terminated or self.truncated

    @property
    def lease_expires_at(self) -> datetime:
        idle = time.monotonic() - self.last_used
        return datetime.now(UTC) + timedelta(seconds=max(0.0, self.lease_s - idle))

    def touch(self) -> None:
        self.last_used = time.monotonic()


def _agent_error(e: AgentError) -> Observation:
    data = {"code": e.code, **{k: v for k, v in e.extra.items() if isinstance(v, str | int | float | bool)}}
    return Observation(text=f"error: {e.detail}", is_error=True, data=data)


def _checked(tool: Tool, call: ToolCall) -> ToolCall:
    """`call` checked against `tool`'s declaration: `call` itself when its arguments pass as they are
    (most calls: no second model to build), else a call with the checked ones (a default filled in)."""
    arguments = tool.check(call.arguments)
    if arguments is call.arguments and call.tool == tool.name:
        return call
    return ToolCall(tool=tool.name, arguments=arguments)


class _SessionIds:
    """Unguessable session ids that sort by time: the creation time in milliseconds (12 hex digits)
    then 96 random bits. The store keys episodes and their steps by this id, and ids that follow
    one another land on the same few index pages: random ids scattered every batch of inserts over
    the whole index, a cost that grew with the store. OS randomness is drawn in blocks (one
    getrandom per id is slow here) and encoded a block at once: 12 bytes are 16 base64 characters,
    so each id takes the next 16."""

    BLOCK = 12 * 256

    def __init__(self) -> None:
        self._pool, self._at = "", 0

    def next(self) -> str:
        if self._at >= len(self._pool):
            self._pool, self._at = base64.urlsafe_b64encode(os.urandom(self.BLOCK)).decode(), 0
        at = self._at
        self._at = at + 16
        return f"{time.time_ns() // 1_000_000:012x}{self._pool[at:at + 16]}"


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
        self._reserved_by: dict[str | None, int] = {}
        self._ids = _SessionIds()
        self._task_refs: dict[str, TaskRef] = {}
        self._tool_lists: dict[tuple[int, ...], tuple[tuple[Tool, ...], ToolList]] = {}
        self._sessions_root: Path | None = None
        self._reaper: asyncio.Task[None] | None = None
        self.faults = FaultInjector(settings)  # off unless ENVHUB_FAULT_RATE > 0
        self.snapshots = SnapshotStore(settings.data_dir / "snapshots", settings.snapshot_ttl_s,
                                       settings.snapshot_quota)
        self.deadlines = Deadlines()

    # -- lifecycle --------------------------------------------------------------------------------
    async def start(self) -> None:
        self._reaper = asyncio.create_task(self._reap_forever(), name="envhub-reaper")
        await self.deadlines.start()

    async def stop(self) -> None:
        if self._reaper:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        await asyncio.gather(*(self.close(sid) for sid in list(self.sessions)), return_exceptions=True)
        await self.deadlines.stop()

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
    def get(self, session_id: str, caller: Caller | None = None) -> Session:
        """The session, for its owner; anyone else is told it does not exist (`caller` None: in-process)."""
        session = self.sessions.get(session_id)
        if session is None or (caller is not None and session.owner != caller.owner):
            raise NotFound(f"unknown session {session_id!r} (closed, reaped, never created, or not yours)",
                           kind="session", name=session_id)
        return session

    def family(self, name: str) -> Family:
        try:
            return self.families[name]
        except KeyError:
            raise NotFound.for_name("environment", name, self.families) from None

    async def create(self, req: ResetRequest, caller: Caller | None = None) -> ResetAnswer:
        """Reset: a new session on a task of `req.env`. The answer has `SessionCreated`'s fields; the
        socket writes it as it is, a typed route calls `.model()` (`envhub.core.answers`)."""
        if fault := self.faults.hit("reset"):
            raise fault
        family = self.family(req.env)
        if caller is not None:
            caller.check_family(family.name)
        if req.from_snapshot is not None:
            return await self._from_snapshot(family, req, caller)
        task = (self.catalog.get(req.task_id) if req.task_id
                else self.catalog.sample(req.env, req.seed, keep=lambda t: family.availability(t) is None))
        if task.family != family.name:
            raise RequestError(f"task {task.id!r} belongs to {task.family!r}, not {req.env!r}")
        self._check_available(family, task)
        owner, quota = self._admit(caller, 1)
        try:
            session, observation = await self._open(
                family, task, lambda env: env.reset(task=task, seed=req.seed), what=f"reset of {task.id}",
                harness_name=req.harness or "plain", lease_s=req.lease_s or self.settings.lease_s,
                policy_version=req.policy_version, run_id=req.run_id, owner=owner)
        finally:
            self._release(owner, quota, 1)
        return self._answer_reset(session, observation, caller)

    @staticmethod
    def _check_available(family: Family, task: Task) -> None:
        if (missing := family.availability(task)) is not None:  # before any sandbox is made
            raise RequirementMissing(f"{task.id} cannot run on this server: {missing.reason}; fix: {missing.fix}",
                                     retry_after_s=60, reason=missing.reason, fix=missing.fix)

    async def _open(self, family: Family, task: Task, start: Callable[[Environment], Awaitable[Observation]], *,
                    what: str, harness_name: str, lease_s: float, policy_version: str | None, run_id: str | None,
                    owner: str | None, log: Sequence[StepEntry] = (), parent_id: str | None = None,
                    forked_at_step: int | None = None) -> tuple[Session, Observation]:
        """A new session of `task` whose environment `start` brings up (a reset, or a restore of a
        copy, whose step log `log` the session goes on from); room for it was admitted."""
        started = time.monotonic()
        sid = self._ids.next()
        sessions_dir = self._sessions_dir()
        if family.uses_workdir:  # sandboxes run as other uids and must reach the exported state
            (sessions_dir / sid).mkdir(mode=0o755)
        env: Environment | None = None
        try:
            env = family.make(EnvContext(settings=self.settings, sandbox=self.backend, session_id=sid,
                                         sessions_dir=sessions_dir))
            observation = await self.deadlines.run(task.config.limits.step_timeout_s + STEP_GRACE_S, start(env))
            canonical = {t.name: t for t in env.tools()}
            skin = harness.open_skin(harness_name, family.name, canonical)
        except BaseException as exc:
            if env is not None:
                with contextlib.suppress(Exception):
                    await env.close()
            shutil.rmtree(sessions_dir / sid, ignore_errors=True)
            if isinstance(exc, asyncio.TimeoutError):
                raise EnvError(f"{what} did not finish in time") from exc
            if isinstance(exc, EnvhubError | asyncio.CancelledError):
                raise
            raise EnvError(f"{what} failed ({_logged(exc, what)})") from exc
        tools = skin.tools(canonical)
        session = Session(id=sid, family=family, env=env, task=task, sessions_dir=sessions_dir, lease_s=lease_s,
                          harness=skin.name, policy_version=policy_version, run_id=run_id,
                          tools={t.name: t for t in tools}, canonical=canonical, skin=skin, owner=owner,
                          has_workdir=family.uses_workdir, parent_id=parent_id, forked_at_step=forked_at_step,
                          step_count=len(log), log=list(log))
        session.timings["reset_s"] = time.monotonic() - started
        self.sessions[sid] = session
        metrics.SESSIONS.labels(family.name).inc()
        metrics.LATENCY.labels("reset", family.name).observe(session.timings["reset_s"])
        self._notify("session_created", session)
        for entry in session.log:  # a copy's path so far is its own in the store too
            self._notify("step_done", session, entry)
        return session, observation

    def _answer_reset(self, session: Session, observation: Observation, caller: Caller | None) -> ResetAnswer:
        return ResetAnswer(session_id=session.id, env=session.family.name, observation=observation,
                           tools=self._tool_list(list(session.tools.values())), task=self._task_ref(session.task),
                           lease_expires_at=session.created_at + timedelta(seconds=session.lease_s),  # not idle yet
                           client_token=caller.token if caller is not None else None)

    def _admit(self, caller: Caller | None, n: int) -> tuple[str | None, int | None]:
        """Reserve room for `n` new sessions of `caller` (refused before any resource is taken:
        at capacity, or past its key's quota); (owner, quota) for `_release`."""
        if self.active + n > self.settings.max_sessions:
            metrics.REFUSED.inc()
            raise Unavailable(f"at capacity: {self.active}/{self.settings.max_sessions} sessions"
                              + (f", {n} asked for" if n > 1 else ""), retry_after_s=1.0)
        owner = caller.owner if caller is not None else None
        key = caller.key if caller is not None else None
        quota = key.max_sessions if key is not None else None
        if key is not None and quota is not None and self._owned(owner) + n > quota:
            raise QuotaExceeded(f"API key {key.name!r} may hold {quota} live sessions, its quota"
                                + (f" ({n} asked for)" if n > 1 else "") + ": close one first", retry_after_s=1.0)
        self._reserved += n
        if quota is not None:  # resets in flight count against the key's quota too
            self._reserved_by[owner] = self._reserved_by.get(owner, 0) + n
        return owner, quota

    def _release(self, owner: str | None, quota: int | None, n: int) -> None:
        self._reserved -= n
        if quota is not None:
            left = self._reserved_by.pop(owner) - n
            if left:
                self._reserved_by[owner] = left

    # -- copies of a live episode: forks and snapshots -------------------------------------------
    async def _write_copy(self, source: Session, dest: Path) -> dict[str, Any]:
        """`source`'s live state written to `dest` (`Environment.snapshot`; hold its lock: no step
        runs meanwhile): what the copy leaves out."""
        if source.result is not None or source.closed or source.done:
            raise EpisodeOver("the episode is over: it was verified, closed or cut off; copy a live one")
        if source.broken is not None:  # its environment failed: what it holds is no state to go on from
            raise EnvError(f"the session's environment failed ({source.broken.detail}): it cannot be copied")
        what = f"the copy of {source.id}"
        try:
            return await self.deadlines.run(source.task.config.limits.step_timeout_s + STEP_GRACE_S,
                                            source.env.snapshot(dest))
        except TimeoutError as exc:
            raise EnvError(f"{what} did not finish in time") from exc
        except (EnvhubError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise EnvError(f"{what} failed ({_logged(exc, what)})") from exc

    @staticmethod
    def _told(observation: Observation, notes: dict[str, Any], parent_id: str, at_step: int) -> Observation:
        """A copy's first observation: what the family says of it, where it branched, what was left out."""
        data = {**observation.data, **notes, "forked_from": parent_id, "at_step": at_step}
        text = f"(a copy of session {parent_id} at step {at_step}) {observation.text}"
        if running := notes.get("processes_not_carried"):
            text += f" Running then, not carried: {'; '.join(running)[:2000]}"
        return observation.model_copy(update={"text": text, "data": data})

    async def fork(self, session_id: str, req: ForkRequest, caller: Caller | None = None) -> list[ResetAnswer]:
        """`req.n` new sessions of the caller's, each from a copy of the session's state at its
        current step and its step log so far, so the verifier judges a fork's whole path; the
        source goes on unchanged. A finished episode cannot be forked (409)."""
        source = self.get(session_id, caller)
        source.touch()
        owner, quota = self._admit(caller, req.n)
        scratch = Path(tempfile.mkdtemp(prefix="fork-", dir=self.settings.data_dir))
        made: list[tuple[Session, Observation]] = []

        async def open_one(state: Path) -> None:
            made.append(await self._open(
                source.family, source.task, lambda env: env.restore_owned(task=source.task, state=state),
                what=f"a fork of {session_id}", harness_name=source.harness, lease_s=source.lease_s,
                policy_version=source.policy_version, run_id=source.run_id, owner=owner, log=source.log,
                parent_id=source.id, forked_at_step=at_step))
            made[-1][0].started = source.started  # the episode's time budget is the source's so far

        try:
            async with source.lock:
                notes = await self._write_copy(source, scratch / "state")
                at_step = source.step_count
                # Each copy owns a state folder, which its environment may take whole (a sandbox moves
                # the workspace into place): n copies of the source's state for n forks, not n + 1.
                states = [scratch / "state", *(scratch / f"state-{i}" for i in range(1, req.n))]
                await asyncio.gather(*(copy_tree(states[0], s) for s in states[1:]))
                # The copies start side by side (a branch group's G sandboxes); one failure fails the fork.
                failed = [r for r in await asyncio.gather(*(open_one(s) for s in states), return_exceptions=True)
                          if isinstance(r, BaseException)]
                if failed:
                    raise failed[0]
        except BaseException:
            for fork, _ in made:
                with contextlib.suppress(Exception):
                    await self.close(fork.id)
            raise
        finally:
            self._release(owner, quota, req.n)
            shutil.rmtree(scratch, ignore_errors=True)
        return [self._answer_reset(f, self._told(obs, notes, source.id, at_step), caller) for f, obs in made]

    async def snapshot(self, session_id: str, caller: Caller | None = None) -> SnapshotInfo:
        """Keep a copy of the session's state and step log at its current step, on disk (it outlives
        the server, until `snapshot_ttl_s`), which `create(ResetRequest(from_snapshot=...))` starts
        from; the session goes on unchanged."""
        source = self.get(session_id, caller)
        source.touch()
        owner = caller.owner if caller is not None else None
        snapshot_id, tmp = self.snapshots.new_folder(owner)
        try:
            async with source.lock:
                notes = await self._write_copy(source, tmp / "state")
                return self.snapshots.save(snapshot_id, tmp, owner=owner, session_id=source.id,
                                           env=source.family.name, task_id=source.task.id, step=source.step_count,
                                           harness=source.harness, policy_version=source.policy_version,
                                           run_id=source.run_id, notes=notes, log=source.log)
        except BaseException:
            self.snapshots.discard(tmp)
            raise

    async def _from_snapshot(self, family: Family, req: ResetRequest, caller: Caller | None) -> ResetAnswer:
        assert req.from_snapshot is not None
        snap = self.snapshots.get(req.from_snapshot, caller.owner if caller is not None else None,
                                  check_owner=caller is not None)
        if snap.info.env != family.name or req.task_id not in (None, snap.info.task_id):
            raise RequestError(f"snapshot {snap.info.snapshot_id} is of {snap.info.task_id!r} ({snap.info.env}): "
                               "reset with that env and no other task")
        task = self.catalog.get(snap.info.task_id)
        self._check_available(family, task)
        owner, quota = self._admit(caller, 1)
        try:
            session, observation = await self._open(
                family, task, lambda env: env.restore(task=task, state=snap.state),
                what=f"the start from {snap.info.snapshot_id}", harness_name=req.harness or snap.harness,
                lease_s=req.lease_s or self.settings.lease_s, policy_version=req.policy_version or snap.policy_version,
                run_id=req.run_id or snap.run_id, owner=owner, log=snap.log, parent_id=snap.info.session_id,
                forked_at_step=snap.info.step)
        finally:
            self._release(owner, quota, 1)
        return self._answer_reset(session, self._told(observation, snap.notes, snap.info.session_id, snap.info.step),
                                  caller)

    def list_snapshots(self, caller: Caller | None = None) -> SnapshotList:
        return SnapshotList(snapshots=self.snapshots.list(caller.owner if caller is not None else None))

    def delete_snapshot(self, snapshot_id: str, caller: Caller | None = None) -> None:
        self.snapshots.delete(snapshot_id, caller.owner if caller is not None else None)

    def _task_ref(self, task: Task) -> TaskRef:
        """The task as answers name it: one per task, shared (read-only) by its sessions' answers."""
        ref = self._task_refs.get(task.id)
        if ref is None or ref.prompt != task.prompt:
            ref = self._task_refs[task.id] = TaskRef(id=task.id, prompt=task.prompt)
        return ref

    def _tool_list(self, tools: list[Tool]) -> ToolList:
        """The specs of `tools` as answers list them: one `ToolList` per set of tools, shared (read-only)
        by the sessions that offer it. Keyed by the tools' ids, and the entry keeps the tools alive, so
        an id in a key cannot pass to another tool; a skin that makes its tools per session only
        fills the cache, which is emptied when full."""
        key = tuple(map(id, tools))
        entry = self._tool_lists.get(key)
        if entry is None:
            if len(self._tool_lists) >= 256:
                self._tool_lists.clear()
            entry = self._tool_lists[key] = (tuple(tools), ToolList([t.spec() for t in tools]))
        return entry[1]

    def _owned(self, owner: str | None) -> int:
        """Live sessions of `owner`, counting resets in flight (for a key's quota)."""
        return sum(1 for s in self.sessions.values() if s.owner == owner) + self._reserved_by.get(owner, 0)

    def _sessions_dir(self) -> Path:
        if self._sessions_root is None:
            self._sessions_root = self.settings.data_dir / "sessions"
            self._sessions_root.mkdir(parents=True, exist_ok=True)
        return self._sessions_root

    async def step(self, session_id: str, req: StepRequest, caller: Caller | None = None) -> StepAnswer:
        """One tool call. The answer has `StepResult`'s fields; the socket writes it as it is, a typed
        route calls `.model()` (`envhub.core.answers`)."""
        session = self.get(session_id, caller)
        if session.broken is None and session.result is None and (fault := self.faults.hit("step")):
            session.broken = fault  # answered as env_error by _step_locked, and at verify
        session.touch()
        key = req.idempotency_key
        if key is not None and key in session.answers:
            return self._repeat(session, key, req.action)
        async with session.lock:
            if key is not None and key in session.answers:  # the same key raced us here
                return self._repeat(session, key, req.action)
            if session.result is not None or session.closed:
                raise EpisodeOver("the episode is over: it was verified or closed; start a new session")
            result = await self._step_locked(session, req.action)
            if key is not None:
                session.answers[key] = (req.action, result)
                while len(session.answers) > self.settings.idempotency_cache:
                    del session.answers[next(iter(session.answers))]
        session.touch()
        return result

    @staticmethod
    def _repeat(session: Session, key: str, action: ToolCall) -> StepAnswer:
        """The first answer for a repeated key; the same key with another action is a client bug (409)."""
        first, result = session.answers[key]
        if first != action:
            raise IdempotencyConflict(f"idempotency key {key!r} was used for a different action "
                                      f"({first.tool!r} with other arguments): use a fresh key per action")
        return result

    async def _step_locked(self, session: Session, action: ToolCall) -> StepAnswer:
        if session.result is not None or session.closed:
            raise EpisodeOver("the episode is over: it was verified or closed; start a new session")
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
            # The declaration is checked here, once for every family, before the environment sees the call.
            tool = session.tools.get(action.tool) or find(list(session.tools.values()), action.tool)
            call = _checked(tool, action)
        except AgentError as e:
            return self._answer(session, action, _agent_error(e), FailureClass.agent_error, started)
        try:
            assert session.skin is not None
            obs = await self.deadlines.run(limits.step_timeout_s + STEP_GRACE_S,  # no extra task per step
                                           session.skin.call(call, session.canonical,
                                                             lambda c: self._canonical(session, c, call)))
            failure = FailureClass.agent_timeout if obs.timed_out else FailureClass.ok
        except AgentError as e:
            obs, failure = _agent_error(e), FailureClass.agent_error
        except AgentTimeout as e:
            obs, failure = Observation(text=f"timeout: {e.detail}", is_error=True), FailureClass.agent_timeout
        except (TimeoutError, EnvError, OSError) as e:
            if isinstance(e, EnvError):
                session.broken = e
            elif isinstance(e, TimeoutError):  # the step's deadline (envhub.core.deadlines): its own words
                session.broken = EnvError(f"the environment did not answer: {e}" if str(e) else
                                          "the environment did not answer in time")
            else:  # an OSError's text may name a host path
                session.broken = EnvError(f"the environment did not answer ({_logged(e, 'step of ' + session.id)})")
            log.warning("session %s: environment fault: %s", session.id, session.broken.detail)
            obs, failure = Observation(text=f"environment fault: {session.broken.detail}", is_error=True), \
                FailureClass.env_error
        except Exception as e:  # arguments passed the declaration: a crash is a bug in the family
            metrics.TOOL_CRASHES.labels(session.family.name, call.tool).inc()
            what = f"session {session.id}: tool {call.tool} on task {session.task.id} with arguments " \
                   f"{show(call.arguments, limit=2000)}"
            session.broken = EnvError(f"step crashed ({_logged(e, what)})")
            obs, failure = Observation(text=f"environment fault: {session.broken.detail}", is_error=True), \
                FailureClass.env_error
        return self._answer(session, action, obs, failure, started)

    @staticmethod
    async def _canonical(session: Session, call: ToolCall, checked: ToolCall) -> Observation:
        """One call of the family's own tools, on a skin's behalf, checked against their declarations.
        A skin that passes on the agent's call as it is (`plain`) hands back `checked`: that call was
        checked against this very declaration a moment ago, so it is not checked twice."""
        tool = session.canonical.get(call.tool)
        if call is checked and tool is not None and session.tools.get(call.tool) is tool:
            return await session.env.step(call)
        return await session.env.step(_checked(tool or find(list(session.canonical.values()), call.tool), call))

    def _answer(self, session: Session, action: ToolCall, obs: Observation, failure: FailureClass, started: float,
                truncated: bool = False) -> StepAnswer:
        session.step_count += 1
        elapsed = time.monotonic() - started
        if truncated:
            session.truncated = True
        entry = StepEntry.record(session.step_count, action, obs, failure, elapsed)
        session.log.append(entry)
        metrics.STEPS.labels(session.family.name, failure.value).inc()
        metrics.LATENCY.labels("step", session.family.name).observe(elapsed)
        self._notify("step_done", session, entry)
        # Truncation stays set: once a budget has cut the episode off, every later answer says it is over.
        return StepAnswer(observation=obs, reward=None, terminated=session.terminated, truncated=session.truncated,
                          done=session.done, info={"elapsed_s": round(elapsed, 6)}, failure=failure,
                          trainable=failure.trainable,
                          retryable=failure.retryable, step=session.step_count)

    async def verify(self, session_id: str, caller: Caller | None = None, *, keep_state: bool = False) -> VerifyResult:
        """Judge the episode's final state, once: a repeat answers the same verdict. `keep_state`
        keeps a copy of the state judged, so that `reverify` can judge it again."""
        session = self.get(session_id, caller)
        if session.broken is None and session.result is None and (fault := self.faults.hit("verify")):
            session.broken = fault
        session.touch()
        async with session.lock:
            if session.result is None:
                session.result = await self._verify_locked(session, keep_state)
                session.terminated = True
                metrics.VERIFIES.labels(session.family.name, session.result.failure_class.value).inc()
                metrics.LATENCY.labels("verify", session.family.name).observe(
                    session.result.timings.get("total_s", 0.0))
                self._notify("verified", session, session.result)
                with contextlib.suppress(Exception):
                    await session.env.close()  # free the sandbox now; the session record stays
        return session.result

    async def reverify(self, session_id: str, caller: Caller | None = None) -> Reverified:
        """Judge a verified episode's final state again, as verify judged it (the same exported state
        and step log, a fresh run of the verifier), and say whether the verdict flipped. The episode
        keeps its first verdict; the store records the second beside it (a run's
        `verifier_disagreement`). `Conflict` before verify, or when the verify kept no state."""
        session = self.get(session_id, caller)
        session.touch()
        async with session.lock:
            first = session.result
            if first is None:
                raise Conflict("verify the episode first: only a verified episode's final state is judged again")
            if session.final_state is None:
                raise Conflict(f"no final state was kept (the verdict is {first.failure_class.value}): verify "
                               "with keep_state=true keeps the state it judges, when export gave one")
            if session.reverifies >= MAX_REVERIFIES:
                raise Conflict(f"this episode's final state was judged again {MAX_REVERIFIES} times already")
            session.reverifies += 1
            state = await self._copy_state(session.final_state, session.workdir / f"reverify-{uuid.uuid4().hex[:8]}")
            if state is None:
                raise Conflict("the kept final state could not be copied to judge it again")
            second = await self.judge(session.task, state, session.log)  # consumes the copy
        a, b = VerdictOutcome.of(first), VerdictOutcome.of(second)
        answer = Reverified(first=a, second=b, flipped=(a.reward, a.passed) != (b.reward, b.passed))
        if not session.closed:  # a close meanwhile removed the state: that second verdict judged nothing
            self._notify("reverified", session, answer)
        return answer

    async def _verify_locked(self, session: Session, keep_state: bool = False) -> VerifyResult:
        started = time.monotonic()
        task = session.task
        if session.broken is not None:
            return verdict(task, failure=FailureClass.env_error, detail=session.broken.detail)
        invalid = await asyncio.to_thread(invalid_reason, task)
        if invalid:  # validation proved with a control that no policy can pass it here: never a trainable 0
            return verdict(task, failure=FailureClass.task_invalid, detail=invalid)
        session.has_workdir = True
        session.workdir.mkdir(mode=0o755, exist_ok=True)
        state = session.workdir / "final-state"
        try:
            await asyncio.wait_for(session.env.export_state(state), timeout=task.config.limits.verify_timeout_s)
        except AgentTimeout as e:  # the agent's own output ran a tool past its limit (e.g. a recalculation bomb)
            return verdict(task, failure=FailureClass.agent_timeout, detail=e.detail)
        except (TimeoutError, EnvError, OSError) as e:
            detail = e.detail if isinstance(e, EnvError) else \
                f"exporting the final state failed ({_logged(e, 'export of ' + session.id)})"
            return verdict(task, failure=FailureClass.env_error, detail=detail)
        except Exception as e:
            return verdict(task, failure=FailureClass.env_error,
                           detail=f"export crashed ({_logged(e, 'export of ' + session.id)})")
        export_s = time.monotonic() - started
        kept = time.monotonic()
        if keep_state:
            session.final_state = await self._copy_state(state, session.workdir / "kept-state")
        keep_s = time.monotonic() - kept
        result = await self.judge(task, state, session.log)
        # the copy is the trainer's sampling, not the verify's: left out of total_s, timed on its own
        result.timings.update(export_s=round(export_s, 4), total_s=round(time.monotonic() - started - keep_s, 4))
        if keep_state:
            result.timings["keep_state_s"] = round(keep_s, 4)
        return result

    async def _copy_state(self, state: Path, dest: Path) -> Path | None:
        """A copy of an exported state at `dest` (links kept as links), or None when copying failed."""
        try:
            await asyncio.to_thread(shutil.copytree, state, dest, symlinks=True)
        except OSError as e:
            log.warning("copying the final state %s failed: %s", state, e)
            return None
        return dest

    async def judge(self, task: Task, state: Path, steps: Sequence[StepEntry]) -> VerifyResult:
        """Run the verifier over an exported state; crashes of the runner itself are verifier errors."""
        try:
            return await self.verifier.verify(task, state, trajectory(steps))
        except EnvhubError as e:
            failure = e.failure_class or FailureClass.verifier_error
            return verdict(task, failure=failure, detail=e.detail)
        except Exception as e:
            return verdict(task, failure=FailureClass.verifier_error,
                           detail=f"verifier runner crashed ({_logged(e, 'verifier runner for ' + task.id)})")

    def state(self, session_id: str, caller: Caller | None = None) -> SessionState:
        s = self.get(session_id, caller)
        s.touch()
        return SessionState(session_id=s.id, env=s.family.name, task_id=s.task.id, step_count=s.step_count,
                            terminated=s.terminated, truncated=s.truncated, done=s.done, created_at=s.created_at,
                            lease_expires_at=s.lease_expires_at, verified=s.result is not None)

    async def close(self, session_id: str, caller: Caller | None = None) -> None:
        """Close a session; unknown ids are fine (idempotent), and so, doing nothing, is another's session."""
        session = self.sessions.get(session_id)
        if session is None or (caller is not None and session.owner != caller.owner):
            return
        del self.sessions[session_id]
        session.closed = True
        metrics.SESSIONS.labels(session.family.name).dec()
        try:
            await self.deadlines.run(30, session.env.close())  # no extra task per close, unlike wait_for
        except Exception:
            log.exception("session %s: close failed", session.id)
        if session.has_workdir:  # a stat per close showed in the profile; echo sessions make no folder
            await asyncio.to_thread(shutil.rmtree, session.workdir, True)
        self._notify("session_closed", session)

    # -- reaper -----------------------------------------------------------------------------------
    async def reap_once(self) -> int:
        now = time.monotonic()
        stale = [s.id for s in self.sessions.values() if now - s.last_used > s.lease_s and not s.lock.locked()]
        for sid in stale:
            log.info("reaping idle session %s", sid)
            await self.close(sid)
        await asyncio.to_thread(self.snapshots.expire)
        return len(stale)

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.reap_interval_s)
            try:
                await self.reap_once()
            except Exception:
                log.exception("reaper pass failed")


def _logged(exc: BaseException, what: str) -> str:
    """Log a fault with its traceback under a fresh reference, and return the words a reply carries:
    the reference, never the exception's name or text (which may hold a host path or a secret)."""
    ref = uuid.uuid4().hex[:12]
    log.error("%s failed (ref %s)", what, ref, exc_info=exc)
    return f"ref {ref}: the server's log has the details"
