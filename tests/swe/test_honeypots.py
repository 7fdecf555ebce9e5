"""Honeypot tests and the report integrity rules (`verifiers.swe_honeypots`), and the jail."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from envhub.tasks.model import Task
from verifiers.swe import PASSED, jail_argv, jail_available, run_state
from verifiers.swe_honeypots import PLANTERS, Honeypot, check_report, plant
from verifiers.swe_reports import Statuses, parse

from .conftest import SWE_TASKS

HONEY = [Honeypot("t#must_pass", True), Honeypot("t#must_fail", False)]
GRADED = ["t#a", "t#b"]


def _statuses(**kw: str) -> Statuses:
    return Statuses({"t#a": PASSED, "t#b": PASSED, "t#must_pass": PASSED, "t#must_fail": "failed", **kw})


def test_a_true_report_is_not_forged():
    assert check_report(_statuses(), [], GRADED, HONEY) == []


@pytest.mark.parametrize(("statuses", "why"), [
    ({"t#must_fail": PASSED}, "must fail, is reported passed"),
    ({"t#must_pass": "failed"}, "must pass, is reported failed"),
    ({"t#other": PASSED}, "the task does not have"),
])
def test_forged_reports(statuses: dict[str, str], why: str):
    assert why in "; ".join(check_report(_statuses(**statuses), [], GRADED, HONEY))


def test_a_missing_honeypot_is_forgery():
    s = _statuses()
    del s["t#must_pass"]
    assert "missing from the report" in check_report(s, [], GRADED, HONEY)[0]


def test_duplicates_are_counted_by_the_parsers_and_are_forgery():
    xml = '<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="a"/></testsuite>'
    s = parse("junit_xml", xml)
    assert s.duplicates == ["t#a"]
    assert "listed more than once" in "; ".join(check_report(s, s.duplicates, ["t#a"], []))
    assert check_report(s, s.duplicates, ["t#a"], [], "r") == []  # testthat: one case per expectation


def test_every_language_has_a_planter():
    assert sorted(PLANTERS) == sorted(d.name for d in SWE_TASKS.iterdir() if d.is_dir())


@pytest.mark.parametrize("task_dir", sorted(SWE_TASKS.glob("*/*")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_planted_in_every_task_with_fresh_names(task_dir: Path, tmp_path: Path):
    """Each task's test files take a must-pass and a must-fail honeypot; names differ per run."""
    from environments.swe.repo import clone_base
    from verifiers.swe import SweConfig, apply_patch

    task = Task.load(task_dir)
    cfg = SweConfig.from_task_dir(task_dir)
    seen = []
    for seed in (1, 2):
        repo = tmp_path / f"r{seed}"
        clone_base(task, repo)
        apply_patch(repo, task_dir / "tests" / "test.patch")
        planted = plant(repo, cfg.language, random.Random(seed))
        assert sorted(h.must_pass for h in planted) == [False, True]
        seen.append({h.id for h in planted})
    assert not seen[0] & seen[1]


@pytest.mark.skipif(not jail_available(), reason="user namespaces are not allowed here")
def test_jail_hides_the_harness_and_is_read_only(tmp_path: Path):
    """Inside the jail: no other process is visible, another uid, nothing writable but its folders."""
    import subprocess

    own = tmp_path / "own"
    own.mkdir()
    script = "ls /proc | grep -c '^[0-9]' ; id -u ; touch /usr/x 2>/dev/null || echo ro; touch own/ok"
    out = subprocess.run(jail_argv(script, cwd=tmp_path, writable=(own,), status_fd=2), capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    lines = out.stdout.split()
    assert int(lines[0]) <= 4 and lines[1] != "0" and lines[2] == "ro", out.stdout
    assert (own / "ok").exists()
    assert re.search(r'"child-pid"', out.stderr)


def test_gold_run_keeps_honeypots_apart(python_task: Task, base_checkout: Path):
    """A real run with honeypots: they get their true statuses and the report is clean."""
    import json

    from verifiers.swe import apply_patch

    apply_patch(base_checkout, python_task.solution_dir / "gold.patch")
    run = run_state(base_checkout, python_task.path, honeypots=True)
    assert run.jailed == jail_available()
    tests = json.loads((python_task.tests_dir / "tests.json").read_text())
    honey = [Honeypot(i, p) for i, p in run.honeypots.items()]
    assert len(honey) == 2
    assert check_report(run.statuses, run.duplicates, tests["FAIL_TO_PASS"] + tests["PASS_TO_PASS"], honey) == []
