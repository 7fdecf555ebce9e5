"""Validate tasks: the gate every task passes before it is served as validated (DESIGN §6).

For each task: static checks; the oracle scores the maximum on every run; a do-nothing agent
scores the minimum; verifying the same final state twice gives identical verdicts; every family
mutator applied to the oracle's final state fails; every exploit canary planted into the
do-nothing state fails; and the family's own extra checks pass. Episodes run through the same
`SessionManager` the server uses, in-process.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from envhub.core.hub import Hub
from envhub.core.sessions import Session
from envhub.env import ValidationContext, ValidationFinding
from envhub.episode import StepEntry, trajectory
from envhub.errors import EnvhubError, FailureClass
from envhub.records import write_record
from envhub.sandbox.base import UNLIMITED_MB, ExecResult, SandboxBackend, SandboxSpec
from envhub.spec import ResetRequest, StepRequest, VerifyResult
from envhub.tasks.digest import tree_sha256
from envhub.tasks.model import HIDDEN_DIRS, Task
from envhub.validate.exploits import EXPLOITS
from envhub.verify.runner import VerifierRunner


@dataclass
class TaskReport:
    task_id: str
    family: str
    status: str = "validated"
    findings: list[ValidationFinding] = field(default_factory=list)
    seconds: float = 0.0

    #: Why no policy can succeed (a control proved it): served as `task_invalid`, not as a 0.
    task_invalid: str = ""

    def add(self, check: str, ok: bool, detail: str = "", **data: Any) -> None:
        self.findings.append(ValidationFinding(check=check, ok=ok, detail=detail, data=data))
        if not ok:
            self.status = "rejected"

    def summary(self, prefix: str) -> str:
        rows = [f for f in self.findings if f.check == prefix or f.check.startswith(prefix + ":")]
        if not rows:
            return "-"
        bad = [f for f in rows if not f.ok]
        return f"{len(rows) - len(bad)}/{len(rows)}" if len(rows) > 1 or bad else "ok"

    def as_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "family": self.family, "status": self.status,
                "seconds": round(self.seconds, 3), "findings": [asdict(f) for f in self.findings]}


def deserved(result: VerifyResult, *, oracle: bool, null_expected: str = "fail") -> bool:
    """Whether a verdict is the one the agent deserves: a judged verdict (failure class ok) with the
    maximum for the oracle, and for a do-nothing agent the minimum (or a pass where the task says
    doing nothing passes)."""
    if result.failure_class is not FailureClass.ok:
        return False
    if oracle:
        return result.passed and result.reward == 1.0
    if null_expected == "pass":
        return result.passed
    return not result.passed and result.reward == 0.0


def _fingerprint(result: VerifyResult) -> tuple:
    return (result.failure_class, result.reward, result.passed, tuple((c.id, c.passed, c.score) for c in result.checks))


class Validator:
    def __init__(self, hub: Hub, *, runs: int = 3, write: bool = True) -> None:
        self.hub = hub
        self.runs = runs
        self.write = write
        self.scratch = Path(tempfile.mkdtemp(prefix="validate-", dir=hub.settings.data_dir))
        self.scratch.chmod(0o755)

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)

    # -- episodes -----------------------------------------------------------------------------------
    async def _episode(self, task: Task, actions: list, dest: Path) -> tuple[Session, list[StepEntry]]:
        """Run `actions` on a fresh session, export its final state into `dest`, close it."""
        m = self.hub.manager
        created = await m.create(ResetRequest(env=task.family, task_id=task.id))
        session = m.get(created.session_id)
        try:
            for action in actions:
                answer = await m.step(session.id, StepRequest(action=action))
                if answer.failure is FailureClass.env_error:
                    raise EnvhubError(f"env_error during the episode: {answer.observation.text[:300]}")
            await session.env.export_state(dest)
            return session, list(session.log)
        finally:
            await m.close(session.id)

    async def _judge_copy(self, task: Task, state: Path, steps: list[StepEntry], name: str) -> VerifyResult:
        copy = self.scratch / f"{name}-{time.monotonic_ns()}"
        await _copy(state, copy)
        try:
            return await self.hub.manager.judge(task, copy, steps)
        finally:
            shutil.rmtree(copy, ignore_errors=True)

    # -- the checks ---------------------------------------------------------------------------------
    def _static(self, task: Task, report: TaskReport) -> None:
        hidden = {tree_sha256(p) for d in HIDDEN_DIRS for p in (task.path / d).rglob("*")
                  if p.is_file() and p.stat().st_size > 64}
        leaked = [p.relative_to(task.path).as_posix() for p in task.state_dir.rglob("*")
                  if p.is_file() and p.stat().st_size > 64 and tree_sha256(p) in hidden] if task.state_dir.is_dir() else []
        escapes = [p.relative_to(task.path).as_posix() for p in task.state_dir.rglob("*")
                   if p.is_symlink() and not (p.parent / p.readlink()).resolve().is_relative_to(
                       task.state_dir.resolve())] if task.state_dir.is_dir() else []
        report.add("static", not leaked and not escapes,
                   "hidden files copied into state/: " + ", ".join(leaked) if leaked else
                   "symlinks out of state/: " + ", ".join(escapes) if escapes else "")

    async def _harness_control(self, task: Task, state: Path, steps: list[StepEntry], report: TaskReport) -> None:
        """The oracle was judged below the maximum: is it the task's own harness that cannot run
        under the sandbox's limits (ThreadSanitizer's or AddressSanitizer's terabytes of address
        space, `go test -race`)? Judge the same state with the address-space limit lifted; if the
        oracle then passes, the task is invalid as served, and no policy is to blame for its 0."""
        backend = self.hub.manager.backend
        if backend.name != "local":  # containers limit memory by cgroup, not address space
            return
        runner = VerifierRunner(self.hub.settings, _LiftedAddressSpace(backend))
        copy = self.scratch / f"harness-{time.monotonic_ns()}"
        await _copy(state, copy)
        try:
            lifted = await runner.verify(task, copy, trajectory(steps))
        finally:
            shutil.rmtree(copy, ignore_errors=True)
        if deserved(lifted, oracle=True):
            report.task_invalid = (
                "the task's own test harness cannot run under the sandbox limits: the oracle fails under them "
                f"(address space {max(2048, task.config.limits.memory_mb)} MiB for the verifier) and passes with the "
                "address-space limit lifted")
            report.add("harness", False, report.task_invalid)

    async def validate(self, task: Task) -> TaskReport:
        started = time.monotonic()
        report = TaskReport(task.id, task.family)
        family = self.hub.families[task.family]
        self._static(task, report)
        d = self.scratch / task.id.replace("/", "__")
        d.mkdir(parents=True)
        try:
            # Oracle: the maximum on every run.
            try:
                actions = family.oracle_actions(task)
            except EnvhubError as e:
                report.add("oracle", False, e.detail)
                actions = None
            oracle_state = None
            oracle_traj: list[dict] = []
            failed: tuple[Path, list[dict]] | None = None  # an oracle run judged below the maximum
            rewards = []
            for i in range(self.runs if actions is not None else 0):
                state = d / f"oracle-{i}"
                try:
                    _, traj = await self._episode(task, actions, state)
                except EnvhubError as e:
                    report.add(f"oracle:run{i + 1}", False, f"episode failed: {e.detail}")
                    continue
                result = await self._judge_copy(task, state, traj, "oracle")
                rewards.append(result.reward)
                ok = deserved(result, oracle=True)
                report.add(f"oracle:run{i + 1}", ok, "" if ok else _why(result), reward=result.reward)
                if ok and oracle_state is None:
                    oracle_state, oracle_traj = state, traj
                elif not ok and result.failure_class is FailureClass.ok and failed is None:
                    failed = (state, traj)
            if oracle_state is None and failed is not None:
                await self._harness_control(task, *failed, report)
            # Null: doing nothing scores the minimum.
            null_state = d / "null"
            try:
                _, null_traj = await self._episode(task, [], null_state)
                null = await self._judge_copy(task, null_state, null_traj, "null")
                ok = deserved(null, oracle=False, null_expected=task.config.null_expected)
                report.add("null", ok, "" if ok else f"do-nothing agent got {null.reward} ({_why(null)})",
                           reward=null.reward)
            except EnvhubError as e:
                report.add("null", False, f"episode failed: {e.detail}")
                null_state = None
            # Determinism: the same state judged twice gives the same verdict.
            if oracle_state is not None:
                a = await self._judge_copy(task, oracle_state, oracle_traj, "det-a")
                b = await self._judge_copy(task, oracle_state, oracle_traj, "det-b")
                report.add("determinism", _fingerprint(a) == _fingerprint(b),
                           "" if _fingerprint(a) == _fingerprint(b) else "two verdicts on one state differ")
                # Mutants: perturbed oracle outcomes must fail (as a judged failure, not a crash).
                for name, mutate in family.mutators().items():
                    state = d / f"mutant-{name}"
                    await _copy(oracle_state, state)
                    if not mutate(task, state):
                        continue
                    r = await self._judge_copy(task, state, oracle_traj, f"mutant-{name}")
                    killed = r.failure_class is FailureClass.ok and not r.passed
                    report.add(f"mutant:{name}", killed, "" if killed else f"mutant survived: {_why(r)}")
            # Exploits: known cheats planted into the do-nothing state must fail.
            if null_state is not None and task.config.null_expected == "fail":
                for name, plant in EXPLOITS.items():
                    state = d / f"exploit-{name}"
                    await _copy(null_state, state)
                    forged = plant(state)
                    r = await self._judge_copy(task, state, forged or null_traj, f"exploit-{name}")
                    ok = not r.passed and r.reward == 0.0
                    report.add(f"exploit:{name}", ok, "" if ok else f"cheat passed: reward {r.reward}")
            # Family-specific checks.
            ctx = ValidationContext(self.hub.settings, self.hub.backend, self.hub.verifier)
            for finding in await family.validate_task(task, ctx):
                report.add(f"family:{finding.check}", finding.ok, finding.detail, **finding.data)
        finally:
            await asyncio.to_thread(shutil.rmtree, d, True)
        report.seconds = time.monotonic() - started
        if self.write:
            write_record(task, {
                "status": report.status, "validated_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "runs": self.runs, "seconds": round(report.seconds, 2),
                "checks": {f.check: f.ok for f in report.findings},
                "rejections": [f"{f.check}: {f.detail}" for f in report.findings if not f.ok],
                "oracle_rewards": rewards,
                **({"task_invalid": report.task_invalid} if report.task_invalid else {}),
            })
        return report


class _LiftedAddressSpace(SandboxBackend):
    """The hub's backend, with verifier runs free of the address-space limit (the harness control)."""

    def __init__(self, inner: SandboxBackend) -> None:
        self.inner = inner
        self.name = inner.name

    def check(self) -> None:
        self.inner.check()

    async def start(self, spec: SandboxSpec) -> Any:
        return await self.inner.start(spec)

    async def run_once(self, spec: SandboxSpec, argv: Any, *, timeout_s: float, max_output: int = 64_000,
                       result: bool = False) -> ExecResult:
        lifted = spec.model_copy(update={"limits": spec.limits.model_copy(update={"memory_mb": UNLIMITED_MB})})
        return await self.inner.run_once(lifted, argv, timeout_s=timeout_s, max_output=max_output, result=result)


async def _copy(src: Path, dest: Path) -> None:
    await asyncio.to_thread(shutil.copytree, src, dest, symlinks=True)


def _why(result: VerifyResult) -> str:
    failed = [f"{c.id}: {c.message[:200]}" for c in result.checks if not c.passed]
    return f"{result.failure_class.value} reward={result.reward} {result.detail[:300]} {'; '.join(failed)[:600]}"


async def validate_tasks(settings: Any, tasks: list[Task], *, runs: int = 3, write: bool = True, jobs: int = 1,
                         on_start: Callable[[Task], None] = lambda _: None,
                         on_done: Callable[[TaskReport], None] = lambda _: None) -> list[TaskReport]:
    """Validate `tasks` on one hub of their families, `jobs` at a time (one slow task no longer
    holds up the rest); the reports come back in the tasks' order, whatever order they finish in.
    `envhub validate` and the SWE factory (which keeps only what this gate accepts) call it."""
    needed = sorted({t.family for t in tasks})
    hub = Hub.build(settings.model_copy(update={"families": needed, "store_enabled": False}))  # no training episodes
    await hub.start()
    validator = Validator(hub, runs=runs, write=write)
    slots = asyncio.Semaphore(max(1, jobs))

    async def one(task: Task) -> TaskReport:
        async with slots:
            on_start(task)
            report = await validator.validate(task)
        on_done(report)
        return report

    try:
        return list(await asyncio.gather(*(one(t) for t in tasks)))
    finally:
        validator.close()
        await hub.stop()
