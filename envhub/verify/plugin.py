"""envhub's pytest result plugin, loaded inside the verifier sandbox with `-p`.

It records one check per test and writes the result as JSON to a pipe the runner passed in
(`ENVHUB_RESULT_FD`), never to a file: nothing in the judged state can forge it. It imports only
the standard library and pytest.

A test declares its check with `@pytest.mark.check(id="...", kind="hard", weight=1.0)`; kinds are
`hard`, `collateral`, `anti_hack` (the gate), `soft` (weighted partial credit) and `quality`.
A test may give partial credit with `request.node.user_properties.append(("score", 0.5))`.
Raising an exception whose class is named `EnvFault` marks an environment fault.
"""

from __future__ import annotations

import json
import os
import time

import pytest

_FD: str | None = None  # read at configure: the warm verifier imports this module before the fd exists
_results: dict[str, dict] = {}
_collect_errors: list[str] = []
#: Wall-clock stamps of the run's phases (the runner turns them into `timings`).
_phases: dict[str, float] = {}


def pytest_configure(config: pytest.Config) -> None:
    global _FD
    _FD = os.environ.pop("ENVHUB_RESULT_FD", None)
    _phases["configure"] = time.time()
    config.addinivalue_line("markers", "check(id, kind, weight): declare a verifier check")


def _message(report: pytest.TestReport) -> str:
    if report.passed:
        return ""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    return text[:2000]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    marker = item.get_closest_marker("check")
    kw = dict(marker.kwargs) if marker else {}
    entry = _results.setdefault(item.nodeid, {
        "id": str(kw.get("id") or item.name),
        "kind": str(kw.get("kind", "hard")),
        "weight": float(kw.get("weight", 1.0)),
        "outcome": "passed",
        "message": "",
        "score": None,
    })
    for name, value in item.user_properties:
        if name == "score":
            entry["score"] = float(value)
    excinfo = call.excinfo
    if excinfo is not None and type(excinfo.value).__name__ == "EnvFault":
        entry.update(outcome="env_fault", message=str(excinfo.value)[:2000])
        return
    if report.when == "call":
        if report.failed:
            entry.update(outcome="failed", message=_message(report))
        elif report.skipped:
            entry.update(outcome="skipped", message="skipped: " + _message(report))
    elif report.failed and entry["outcome"] == "passed":
        entry.update(outcome="error", message=f"{report.when} error: {_message(report)}")
    elif report.skipped and entry["outcome"] == "passed":
        entry.update(outcome="skipped", message="skipped")


def pytest_collection_finish(session: pytest.Session) -> None:
    _phases["collected"] = time.time()


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _collect_errors.append(f"{report.nodeid}: {str(report.longrepr)[-2000:]}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _FD is None:
        return
    _phases["finished"] = time.time()
    payload = {"schema": "envhub-verifier/1", "checks": list(_results.values()),
               "collect_errors": _collect_errors, "exitstatus": int(exitstatus), "phases": _phases}
    with os.fdopen(int(_FD), "w") as f:
        json.dump(payload, f)
