"""What makes a verdict: how pytest runs inside the verifier sandbox and how its result is read.

This module, the result plugin (`plugin.py`) and the verifier runtime's pinned packages
(`verifiers/requirements.txt`) are the runtime's part of a validation record's key
(`envhub.records`): a change here can move a verdict, so it stales every record. How a verify is
carried out (a cold sandbox or a warm zygote's fork, the copies, the result pipe: `runner.py`,
`warm.py`, `zygote.py`) is not in the key, like the sandbox backends: the warm and cold paths are
held to the same verdict by tests (`tests/verify/test_warm.py`), not by records.
"""

from __future__ import annotations

import json

from envhub.errors import FailureClass
from envhub.spec import GATE_KINDS, CheckResult, VerifierRef, VerifyResult
from envhub.tasks.model import Task

QUALITY_WEIGHT = 0.3
MAX_RESULT_BYTES = 4 * 1024 * 1024  # a larger result is no result: a verifier_error
#: The verifier's environment, warm or cold (the result pipe's number is added per run).
VERIFY_ENV = {"PYTHONPATH": "/verify/lib:/verify/site", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
              "PYTHONDONTWRITEBYTECODE": "1", "ENVHUB_STATE": "/workspace", "ENVHUB_TASK": "/verify/task",
              "ENVHUB_TRAJECTORY": "/verify/trajectory.jsonl", "HOME": "/tmp", "PYTHONHASHSEED": "0"}
PYTEST_ARGS = ["-q", "-p", "envhub_result_plugin", "-p", "no:cacheprovider", "--noconftest",
               "-c", "/verify/lib/pytest.ini", "--rootdir", "/verify/tests", "-o", "console_output_style=classic",
               "/verify/tests"]
#: The verifier's pytest.ini: no option from anywhere else.
PYTEST_INI = "[pytest]\naddopts =\n"


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


def interpret(task: Task, raw: bytes, exit_code: int | None, output: str, timings: dict[str, float]) -> VerifyResult:
    """The verdict from the plugin's result (`raw`, read from its pipe) and pytest's exit status."""
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
