"""Honeypot tests and the report integrity rules (`verifiers.swe_honeypots`), and the jail."""

from __future__ import annotations

import os
import random
import re
import resource
import shutil
from pathlib import Path

import pytest

from envhub.config import get_settings
from envhub.tasks.model import Task
from envhub.verify import runtime
from verifiers.swe import HARNESS_RESERVE, PASSED, jail_argv, jail_available, run_state
from verifiers.swe_honeypots import PLANTERS, Honeypot, _Case, check_report, plant
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
])
def test_forged_reports(statuses: dict[str, str], why: str):
    assert why in "; ".join(check_report(_statuses(**statuses), [], GRADED, HONEY))


def test_a_missing_honeypot_is_forgery():
    s = _statuses()
    del s["t#must_pass"]
    assert "missing from the report" in check_report(s, [], GRADED, HONEY)[0]


def test_tests_the_agent_added_are_ignored():
    """An honest agent that adds tests in unprotected paths, passing or not, is not a forger."""
    assert check_report(_statuses(**{"u#new": PASSED, "u#wip": "failed", "v#a": PASSED}), [], GRADED, HONEY) == []


def test_a_missing_required_test_is_forgery():
    s = _statuses()
    del s["t#b"]
    assert "required test(s) missing from the report: 't#b'" in "; ".join(check_report(s, [], GRADED, HONEY))


def test_an_added_test_cannot_shadow_a_required_one():
    """A test of the same name in another class does not stand in for the required one; one that
    reuses the required id makes it a duplicate (forged), and the failure is kept."""
    s = _statuses(**{"u#a": PASSED})
    del s["t#a"]
    assert "missing from the report: 't#a'" in "; ".join(check_report(s, [], GRADED, HONEY))
    xml = ('<testsuite><testcase classname="t" name="a"><failure/></testcase><testcase classname="t" name="b"/>'
           '<testcase classname="t" name="a"/><testcase classname="t" name="must_pass"/>'
           '<testcase classname="t" name="must_fail"><failure/></testcase></testsuite>')
    s = parse("junit_xml", xml)
    assert s["t#a"] == "failed"
    assert "required test 't#a' is listed more than once" in "; ".join(check_report(s, s.duplicates, GRADED, HONEY))


def test_an_added_test_listed_twice_is_ignored():
    xml = '<testsuite><testcase classname="u" name="x"/><testcase classname="u" name="x"/></testsuite>'
    s = parse("junit_xml", xml)
    s.update(_statuses())
    assert check_report(s, s.duplicates, GRADED, HONEY) == []


def test_duplicates_are_counted_by_the_parsers_and_are_forgery():
    xml = '<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="a"/></testsuite>'
    s = parse("junit_xml", xml)
    assert s.duplicates == ["t#a"]
    assert "listed more than once" in "; ".join(check_report(s, s.duplicates, ["t#a"], []))
    assert check_report(s, s.duplicates, ["t#a"], [], "r") == []  # testthat: one case per expectation


def test_every_language_has_a_planter():
    assert sorted(PLANTERS) == sorted(d.name for d in SWE_TASKS.iterdir() if d.is_dir())


def test_a_lua_honeypot_is_named_by_its_own_line_when_the_verb_repeats(tmp_path: Path):
    """busted names a test `file:line#describe it`: the second of two cases sharing a verb (or a
    spec that already has that `it`) must still point at its own line (it once pointed at the first:
    a true report then looked forged, about one lua verify in ten)."""
    _, lua = PLANTERS["lua"]
    text = 'describe("x", function()\n  it("reads", function()\n  end)\nend)\n'
    for words in (["reads", "entry", "token"], ["reads", "state", "row"]):
        text, hid = lua(tmp_path, "spec/x_spec.lua", text, _Case(words=words, values=[1, 2], total=3))
        line = int(hid.split(":")[1].split("#")[0])
        assert text.split("\n")[line - 1] == '  it("reads", function()', hid
        assert text.split("\n")[line - 2] == f'describe("{" ".join(words[1:])}", function()', hid


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


HARNESS = r"""
import pathlib, subprocess, sys, threading, time
from verifiers.swe import FIXED_ENV, _shell
work = pathlib.Path(sys.argv[1])
bomb = '''python3 -c "
import os, time
n = 0
while n < 400:
    try:
        if os.fork() == 0:
            time.sleep(300)
            os._exit(0)
    except OSError:
        break
    n += 1
open('count', 'w').write(str(n))
open('held', 'w').close()
time.sleep(300)"'''
jail = threading.Thread(target=_shell, args=(bomb,), daemon=True,
                        kwargs=dict(cwd=work, env=dict(FIXED_ENV), timeout=300, jail=(work,)))
jail.start()
while jail.is_alive() and not (work / "held").exists():
    time.sleep(0.1)
try:
    subprocess.run(["true"], check=True)
    print("harness forked")
except OSError as e:
    print("harness starved:", e)
"""


@pytest.mark.skipif(not jail_available() or os.geteuid() != 0, reason="needs user namespaces and root (to pick a uid)")
def test_a_fork_bomb_in_the_jail_leaves_the_harness_its_processes():
    """The harness runs as a uid of its own under RLIMIT_NPROC, as in a verifier sandbox; the code
    under test forks until it is refused and holds its processes: the jail stops at its own cap,
    and the harness can still start a process."""
    import subprocess
    import tempfile

    limit, uid = 96, 64999
    work = Path(tempfile.mkdtemp(prefix="swe-bomb-"))
    work.chmod(0o777)
    # The harness reads the verifiers library where a verifier sandbox does: the clone itself may be
    # closed to other uids (under root's 0700 home on a fresh Debian).
    data = get_settings().data_dir
    lib = runtime.sync_lib(data)

    def become_harness() -> None:
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

    try:
        out = subprocess.run(["/usr/bin/python3", "-c", HARNESS, str(work)], capture_output=True, text=True,
                             timeout=240,
                             preexec_fn=become_harness, cwd=lib,
                             env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{lib}:{runtime.site_dir(data)}"})
        held = int((work / "count").read_text())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert "harness forked" in out.stdout, out.stdout + out.stderr
    assert 20 < held <= limit - HARNESS_RESERVE, held
