"""Run a task's hidden pytest verifier over a frozen final state, in a fresh sandbox.

Warm (local backend, the default): a zygote forks processes per verify that enter fresh namespaces
with the layout below (envhub/verify/warm.py). Cold: a new bubblewrap sandbox per verify.

Inside the verifier sandbox:

    /workspace                 the final state, read-only
    /verify/tests              the task's hidden tests, read-only
    /verify/task               task.yaml, prompt.md and tests/ of the task, read-only
    /verify/trajectory.jsonl   the episode's steps as the server logged them, read-only
    /verify/lib, /verify/site  the `verifiers` library, the result plugin and their packages

No network, its own uid and rlimits, a wall-clock deadline. The result comes back through the
backend's result channel (`run_once(result=True)`; warm: a pipe from the zygote), never through a
file the judged state could hold. A crash, a timeout or a missing or malformed result is a
`verifier_error`; a check that raised `EnvFault` is an `env_error`. How the result becomes a verdict
is `verdict.py`, the part of the runtime that keys validation records; this module carries a
verify out.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from envhub.config import Settings
from envhub.errors import FailureClass
from envhub.sandbox.base import ExecResult, SandboxBackend, SandboxLimits, SandboxSpec
from envhub.spec import VerifyResult
from envhub.tasks.model import Task
from envhub.verify import runtime
from envhub.verify.verdict import MAX_RESULT_BYTES, PYTEST_ARGS, VERIFY_ENV, interpret, verdict
from envhub.verify.warm import WarmPool

log = logging.getLogger(__name__)


class VerifierRunner:
    def __init__(self, settings: Settings, backend: SandboxBackend, *, warm: bool = False) -> None:
        """`warm`: keep zygotes (where the backend hosts services) until `aclose`; the hub's runner does, a
        short-lived runner (one validation, one test) need not."""
        self.settings = settings
        self.backend = backend
        self._lib: Path | None = None
        #: Zygotes that fork per verify; None: every verify is cold.
        self.warm: WarmPool | None = None
        self._want_warm = warm

    def prepare(self) -> None:
        self._lib = runtime.sync_lib(self.settings.data_dir)
        if self._want_warm and self.warm is None:
            if self.backend.no_services is None:
                self.warm = WarmPool(self.backend, self.settings.data_dir, self._lib, VERIFY_ENV, PYTEST_ARGS)
            else:
                log.info("every verify runs cold: the %s backend hosts no warm verifier (%s)", self.backend.name,
                         self.backend.no_services)

    async def warmed(self) -> bool:
        """Wait until a zygote is ready (starting one if needed): whether the next verify is warm."""
        if self._lib is None:
            await asyncio.to_thread(self.prepare)
        return self.warm is not None and await self.warm.ready()

    async def aclose(self) -> None:
        if self.warm is not None:
            await self.warm.aclose()

    async def verify(self, task: Task, state_dir: Path, trajectory: list[dict] | None = None) -> VerifyResult:
        """Judge `state_dir` (consumed: it is owned by the verifier afterwards)."""
        if self._lib is None:
            await asyncio.to_thread(self.prepare)
        assert self._lib is not None
        started = time.monotonic()
        wall_started = time.time()
        zygote = await self.warm.acquire() if self.warm is not None else None
        setup_failed = False
        try:
            # Under the zygote's spool when warm: the folder appears in its sandbox, bound read-only.
            where = zygote.spool if zygote else self.settings.data_dir
            scratch = Path(tempfile.mkdtemp(prefix="verify-", dir=where))
            try:
                traj = scratch / "trajectory.jsonl"
                traj.write_text("".join(json.dumps(s) + "\n" for s in trajectory or []))
                # Copies, not binds: the sandbox uid may not be able to reach the repository's folder.
                await asyncio.to_thread(_copy_task, task, scratch / "task")
                state = await asyncio.to_thread(_take_state, state_dir, scratch / "state")
                for p in (scratch, traj, scratch / "task", *(scratch / "task").rglob("*")):
                    p.chmod(0o755 if p.is_dir() else 0o644)  # the state keeps its own modes
                limits = SandboxLimits(cpu_s=int(task.config.limits.verify_timeout_s) + 5,
                                       memory_mb=max(2048, task.config.limits.memory_mb), processes=256)
                timeout_s = task.config.limits.verify_timeout_s
                launched = time.time()
                run: ExecResult | None = None
                raw = b""
                if zygote is not None:
                    run, raw = await _with_result_pipe(lambda fd: zygote.run(
                        scratch, args=PYTEST_ARGS, env={}, workdir="/verify/tests", limits=limits,
                        timeout_s=timeout_s, result_fd=fd, max_output=16_000))
                    setup_failed = run is None
                if run is None:
                    data = self.settings.data_dir
                    spec = SandboxSpec(
                        template=state,
                        read_only_workspace=True,
                        ro_binds={str(scratch / "task" / "tests"): "/verify/tests",
                                  str(scratch / "task"): "/verify/task", str(traj): "/verify/trajectory.jsonl",
                                  str(self._lib): "/verify/lib", str(runtime.site_dir(data)): "/verify/site"},
                        env=VERIFY_ENV, limits=limits, workdir="/verify/tests")
                    run = await self.backend.run_once(spec, [runtime.PYTHON, "-s", "-B", "-m", "pytest", *PYTEST_ARGS],
                                                      timeout_s=timeout_s, max_output=16_000, result=True)
                    raw = run.result or b""
            finally:
                await asyncio.to_thread(shutil.rmtree, scratch, True)
        finally:
            if zygote is not None and self.warm is not None:
                await self.warm.release(zygote, setup_failed=setup_failed)
        assert run is not None
        warm = zygote is not None and not setup_failed
        timings = {"verify_s": round(time.monotonic() - started, 4),
                   **_phase_timings(raw, wall_started, launched, time.time(), warm=warm)}
        if run.timed_out:
            return verdict(task, failure=FailureClass.verifier_error, timings=timings,
                           detail=f"verifier timed out after {task.config.limits.verify_timeout_s}s")
        return interpret(task, raw, run.exit_code, run.output, timings)


def _phase_timings(raw: bytes, started: float, launched: float, ended: float, *, warm: bool) -> dict[str, float]:
    """Where a verify's time went, from the plugin's wall-clock stamps: copying the state in, the
    sandbox and Python starting (a fork when warm), collecting the tests, running them, and the
    result coming back and the sandbox ending. Empty when the result has no stamps."""
    try:
        p = json.loads(raw)["phases"]
        stamps = [started, launched, float(p["configure"]), float(p["collected"]), float(p["finished"]), ended]
    except (ValueError, KeyError, TypeError):
        return {}
    names = ("verify_prepare_s", "verify_start_s", "verify_collect_s", "verify_tests_s", "verify_result_s")
    out = {n: round(max(0.0, b - a), 4) for n, a, b in zip(names, stamps, stamps[1:], strict=False)}
    out["verify_warm"] = 1.0 if warm else 0.0
    return out


def _take_state(state_dir: Path, dest: Path) -> Path:
    """Move the state under the verifier's scratch folder, which the sandbox uid can reach."""
    try:
        state_dir.rename(dest)
    except OSError:
        shutil.copytree(state_dir, dest, symlinks=True)
    return dest


def _copy_task(task: Task, dest: Path) -> None:
    """The verifier's view of the task: its config, prompt and hidden tests (not its starting state)."""
    dest.mkdir()
    for name in ("task.yaml", "prompt.md"):
        shutil.copy2(task.path / name, dest / name)
    shutil.copytree(task.tests_dir, dest / "tests", ignore=shutil.ignore_patterns("__pycache__"))


async def _with_result_pipe(start: Callable[[int], Awaitable[ExecResult | None]]) -> tuple[ExecResult | None, bytes]:
    """Run `start(write_fd)` and read the result the verifier writes to that pipe (never a file)."""
    read_fd, write_fd = os.pipe()
    try:
        reader = asyncio.get_running_loop().run_in_executor(None, _read_all, read_fd)
        try:
            run = await start(write_fd)
        finally:
            os.close(write_fd)
        raw = await reader
    finally:
        os.close(read_fd)
    return run, raw


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(fd, 65536):
        size += len(chunk)
        if size > MAX_RESULT_BYTES:
            return b""
        chunks.append(chunk)
    return b"".join(chunks)
