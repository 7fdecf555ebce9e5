"""The report integrity rules (`verifiers.swe_twins.check_report`) and the jail."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
from dataclasses import asdict
from pathlib import Path

import pytest

from envhub.config import get_settings
from envhub.sandbox.base import ExecResult
from envhub.verify import runtime
from environments.swe.validate import result_of
from verifiers.swe import HARNESS_RESERVE, PASSED, RESULT_MARKER, RunResult, jail_argv, jail_available
from verifiers.swe_reports import Statuses, parse
from verifiers.swe_twins import Planted, check_report

COPIES = [Planted("must_pass", "t#a", False, "t#must_pass"), Planted("must_fail", "t#a", True, "t#must_fail")]
GRADED = ["t#a", "t#b"]


def _statuses(**kw: str) -> Statuses:
    return Statuses({"t#a": PASSED, "t#b": PASSED, "t#must_pass": PASSED, "t#must_fail": "failed", **kw})


def test_a_true_report_is_not_forged():
    assert check_report(_statuses(), [], GRADED, COPIES) == []


@pytest.mark.parametrize(("statuses", "why"), [
    ({"t#must_fail": PASSED}, "is reported passed"),
    ({"t#must_pass": "failed"}, "exact copy of 't#a' is reported failed"),
])
def test_forged_reports(statuses: dict[str, str], why: str):
    assert why in "; ".join(check_report(_statuses(**statuses), [], GRADED, COPIES))


def test_tests_the_agent_added_are_ignored():
    """An honest agent that adds tests in unprotected paths, passing or not, is not a forger."""
    assert check_report(_statuses(**{"u#new": PASSED, "u#wip": "failed", "v#a": PASSED}), [], GRADED, COPIES) == []


def test_a_missing_required_test_is_forgery():
    s = _statuses()
    del s["t#b"]
    assert "required test(s) missing from the report: 't#b'" in "; ".join(check_report(s, [], GRADED, COPIES))


def test_an_added_test_cannot_shadow_a_required_one():
    """A test of the same name in another class does not stand in for the required one; one that
    reuses the required id makes it a duplicate (forged), and the failure is kept."""
    s = _statuses(**{"u#a": PASSED})
    del s["t#a"]
    assert "missing from the report: 't#a'" in "; ".join(check_report(s, [], GRADED, []))
    xml = ('<testsuite><testcase classname="t" name="a"><failure/></testcase><testcase classname="t" name="b"/>'
           '<testcase classname="t" name="a"/></testsuite>')
    s = parse("junit_xml", xml)
    assert s["t#a"] == "failed"
    assert "required test 't#a' is listed more than once" in "; ".join(check_report(s, s.duplicates, GRADED, []))


def test_an_added_test_listed_twice_is_ignored():
    xml = '<testsuite><testcase classname="u" name="x"/><testcase classname="u" name="x"/></testsuite>'
    s = parse("junit_xml", xml)
    s.update(_statuses())
    assert check_report(s, s.duplicates, GRADED, COPIES) == []


def test_duplicates_are_counted_by_the_parsers_and_are_forgery():
    xml = '<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="a"/></testsuite>'
    s = parse("junit_xml", xml)
    assert s.duplicates == ["t#a"]
    assert "listed more than once" in "; ".join(check_report(s, s.duplicates, ["t#a"], []))
    assert check_report(s, s.duplicates, ["t#a"], [], "r") == []  # testthat: one case per expectation


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


@pytest.mark.skipif(not jail_available(), reason="user namespaces are not allowed here")
def test_the_code_under_test_cannot_read_the_tasks_hidden_files(tmp_path: Path):
    """`tests.json` names the tests that judge and `twins.json` which copies are twins: library
    code that read them during a graded run could flip exactly the right verdicts. The jail shows
    it an empty task folder: a fixed library that fails on import when it can see them passes."""
    from envhub.tasks.model import Task
    from environments.swe.repo import clone_base
    from verifiers.swe import apply_patch, load_tests_json, run_state

    task = Task.load(Path("tasks/swe/python/interval-merge").resolve())
    state = tmp_path / "state"
    clone_base(task, state)
    apply_patch(state, task.solution_dir / "gold.patch")
    lib = state / "intervalset" / "core.py"
    probe = f"\nimport pathlib as _p\nif _p.Path({str(task.tests_dir)!r}, 'tests.json').exists():\n" \
            "    raise ImportError('the judge is readable')\n"
    f2p, _ = load_tests_json(task.path)
    assert all(run_state(state, task.path).statuses.get(t) == PASSED for t in f2p)  # the fix, without the probe
    lib.write_text(lib.read_text() + probe)
    run = run_state(state, task.path)
    assert run.jailed and all(run.statuses.get(t) == PASSED for t in f2p), run.test_output[-1500:]
    # and the probe does fire where the file is visible (outside the jail's mask)
    unjailed = subprocess.run(["/usr/bin/python3", "-c", "import intervalset.core"], cwd=state,
                              capture_output=True, text=True)
    assert "the judge is readable" in unjailed.stderr


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


def test_a_validation_runs_result_cut_by_its_output_limit_is_the_tasks_finding_not_a_crash():
    """A suite of thousands with all its twins wrote more than the validator kept: the JSON was cut
    and `envhub validate` died of a JSONDecodeError. Now it is a report error of that task."""
    whole = RunResult(statuses={f"m#t{i}": PASSED for i in range(3)}, build_ok=True)
    line = "noise\n" + RESULT_MARKER + json.dumps(asdict(whole)) + "\n"
    assert result_of(ExecResult(exit_code=0, output=line)) == whole
    torn = result_of(ExecResult(exit_code=0, output=line[: len(line) // 2], truncated=True))
    assert "torn" in torn.report_error and torn.problem() and not torn.statuses
    none = result_of(ExecResult(exit_code=1, output="Traceback ..."))
    assert "wrote no result" in none.report_error
