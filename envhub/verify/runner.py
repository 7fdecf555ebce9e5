"""Run a task's hidden pytest verifier over a frozen final state, in a fresh sandbox.

Inside the verifier sandbox:

    /workspace                 the final state, read-only
    /verify/tests              the task's hidden tests, read-only
    /verify/task               task.yaml, prompt.md and tests/ of the task, read-only
    /verify/trajectory.jsonl   the episode's steps as the server logged them, read-only
    /verify/lib, /verify/site  the `verifiers` library, the result plugin and their packages

No network, its own uid and rlimits, a wall-clock deadline. The result comes back through the
backend's result channel (`run_once(result=True)`), never through a file the judged state could
hold. A crash, a timeout or a missing or malformed result is a `verifier_error`; a check that
raised `EnvFault` is an `env_error`.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import time
from pathlib import Path

from envhub.config import Settings
from envhub.errors import FailureClass
from envhub.sandbox.base import SandboxBackend, SandboxLimits, SandboxSpec
from envhub.spec import GATE_KINDS, CheckResult, VerifierRef, VerifyResult
from envhub.tasks.model import Task
from envhub.verify import runtime

QUALITY_WEIGHT = 0.3


def score_checks(checks: list[CheckResult]) -> tuple[float, bool]:
    """reward = gate × (mechanical, or 0.7·mechanical + 0.3·quality when quality checks exist).

    The gate is every hard, collateral and anti-hack check; quality can never lift a failed gate.
    """
    gate = all(c.passed for c in checks if c.kind in GATE_KINDS)

    def weighted(kind: tuple[str, ...]) -> float | None:
        chosen = [c for c in checks if c.kind in kind]
        total = sum(c.weight for c in chosen)
        return None if not chosen or total <= 0 else sum(c.weight * c.score for c in chosen) / total

    soft = weighted(("soft",))
    mechanical = 1.0 if soft is None else soft
    quality = weighted(("quality",))
    value = mechanical if quality is None else (1 - QUALITY_WEIGHT) * mechanical + QUALITY_WEIGHT * quality
    return (round(value, 6) if gate else 0.0), gate


def verdict(task: Task, *, failure: FailureClass, detail: str = "", checks: list[CheckResult] | None = None,
            timings: dict[str, float] | None = None) -> VerifyResult:
    """A verify answer; reward and pass are 0/False unless the episode was judged."""
    checks = checks or []
    reward, passed = score_checks(checks) if failure is FailureClass.ok and checks else (0.0, False)
    return VerifyResult(reward=reward, passed=passed and reward > 0, checks=checks, failure_class=failure,
                        trainable=failure.trainable, retryable=failure.retryable, detail=detail,
                        verifier=VerifierRef(id=task.id, sha256=task.verifier_sha256()), timings=timings or {})


class VerifierRunner:
    def __init__(self, settings: Settings, backend: SandboxBackend) -> None:
        self.settings = settings
        self.backend = backend
        self._lib: Path | None = None

    def prepare(self) -> None:
        self._lib = runtime.sync_lib(self.settings.data_dir)

    async def verify(self, task: Task, state_dir: Path, trajectory: list[dict] | None = None) -> VerifyResult:
        """Judge `state_dir` (consumed: it is owned by the verifier afterwards)."""
        if self._lib is None:
            await asyncio.to_thread(self.prepare)
        assert self._lib is not None
        started = time.monotonic()
        scratch = Path(tempfile.mkdtemp(prefix="verify-", dir=self.settings.data_dir))
        try:
            traj = scratch / "trajectory.jsonl"
            traj.write_text("".join(json.dumps(s) + "\n" for s in trajectory or []))
            # Copies, not binds: the sandbox uid may not be able to reach the repository's folder.
            await asyncio.to_thread(_copy_task, task, scratch / "task")
            state = await asyncio.to_thread(_take_state, state_dir, scratch / "state")
            for p in (scratch, traj, scratch / "task", *(scratch / "task").rglob("*")):
                p.chmod(0o755 if p.is_dir() else 0o644)  # the state keeps its own modes
            data = self.settings.data_dir
            spec = SandboxSpec(
                template=state,
                read_only_workspace=True,
                ro_binds={str(scratch / "task" / "tests"): "/verify/tests", str(scratch / "task"): "/verify/task",
                          str(traj): "/verify/trajectory.jsonl",
                          str(self._lib): "/verify/lib", str(runtime.site_dir(data)): "/verify/site"},
                env={"PYTHONPATH": "/verify/lib:/verify/site", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                     "PYTHONDONTWRITEBYTECODE": "1", "ENVHUB_STATE": "/workspace",
                     "ENVHUB_TASK": "/verify/task", "ENVHUB_TRAJECTORY": "/verify/trajectory.jsonl",
                     "HOME": "/tmp", "PYTHONHASHSEED": "0"},
                limits=SandboxLimits(cpu_s=int(task.config.limits.verify_timeout_s) + 5,
                                     memory_mb=max(2048, task.config.limits.memory_mb), processes=256),
                workdir="/verify/tests",
            )
            argv = [runtime.PYTHON, "-s", "-B", "-m", "pytest", "-q", "-p", "envhub_result_plugin",
                    "-p", "no:cacheprovider", "--noconftest", "-c", "/verify/lib/pytest.ini",
                    "--rootdir", "/verify/tests", "-o", "console_output_style=classic", "/verify/tests"]
            run = await self.backend.run_once(spec, argv, timeout_s=task.config.limits.verify_timeout_s,
                                              max_output=16_000, result=True)
        finally:
            await asyncio.to_thread(shutil.rmtree, scratch, True)
        timings = {"verify_s": round(time.monotonic() - started, 4)}
        if run.timed_out:
            return verdict(task, failure=FailureClass.verifier_error, timings=timings,
                           detail=f"verifier timed out after {task.config.limits.verify_timeout_s}s")
        return self._interpret(task, run.result or b"", run.exit_code, run.output, timings)

    def _interpret(self, task: Task, raw: bytes, exit_code: int | None, output: str,
                   timings: dict[str, float]) -> VerifyResult:
        def broken(why: str) -> VerifyResult:
            return verdict(task, failure=FailureClass.verifier_error, timings=timings,
                           detail=f"{why}; verifier output (tail): {output[-1500:]}")

        if not raw:
            return broken(f"the verifier wrote no result (exit status {exit_code})")
        try:
            payload = json.loads(raw)
            entries = payload["checks"]
        except (ValueError, KeyError, TypeError):
            return broken("the verifier's result is not valid JSON")
        if payload.get("collect_errors"):
            return broken("the verifier could not be collected: " + "; ".join(payload["collect_errors"])[:1500])
        if exit_code not in (0, 1) or not entries:
            return broken(f"pytest ended with status {exit_code} and {len(entries)} checks")
        checks: list[CheckResult] = []
        faults: list[str] = []
        errors: list[str] = []
        for e in entries:
            outcome = e.get("outcome")
            if outcome == "env_fault":
                faults.append(f"{e.get('id')}: {e.get('message')}")
            elif outcome == "error":
                errors.append(f"{e.get('id')}: {e.get('message')}")
            passed = outcome == "passed"
            score = e.get("score")
            score = (1.0 if passed else 0.0) if score is None else max(0.0, min(1.0, float(score)))
            try:
                checks.append(CheckResult(id=str(e["id"]), kind=e.get("kind", "hard"), weight=float(e.get("weight", 1)),
                                          passed=passed, score=score if passed or e.get("kind") in ("soft", "quality")
                                          else 0.0, message=str(e.get("message", ""))[:2000]))
            except (ValueError, KeyError, TypeError) as err:
                return broken(f"invalid check entry {e!r}: {err}")
        if faults:
            return verdict(task, failure=FailureClass.env_error, checks=checks, timings=timings,
                           detail="environment fault seen by the verifier: " + "; ".join(faults)[:2000])
        if errors:
            return verdict(task, failure=FailureClass.verifier_error, checks=checks, timings=timings,
                           detail="verifier setup failed: " + "; ".join(errors)[:2000])
        return verdict(task, failure=FailureClass.ok, checks=checks, timings=timings)


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
