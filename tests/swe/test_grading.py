"""Grading with `verifiers.swe` on a real task: resolved, unresolved, and cheats that must fail."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from envhub.tasks.model import Task
from environments.swe.controls import CONTROLS, PLANTED_CONFTEST
from verifiers import EnvFault
from verifiers.swe import (
    PASSED,
    SweConfig,
    apply_patch,
    copy_repo,
    grade,
    is_protected,
    restore_protected,
    run_state,
    run_suite,
)


def _f2p(task: Task) -> list[str]:
    import json

    return json.loads((task.tests_dir / "tests.json").read_text())["FAIL_TO_PASS"]


def test_gold_resolves_and_base_does_not(python_task: Task, base_checkout: Path):
    before = run_state(base_checkout, python_task.path)
    assert not before.problem()
    assert all(before.statuses[t] != PASSED for t in _f2p(python_task))
    apply_patch(base_checkout, python_task.solution_dir / "gold.patch")
    after = run_state(base_checkout, python_task.path)
    assert all(after.statuses[t] == PASSED for t in _f2p(python_task))
    assert set(after.statuses.values()) == {PASSED}


@pytest.mark.parametrize("control", ["delete-tests", "fake-output", "planted-hook"])
def test_cheats_grade_unresolved(python_task: Task, base_checkout: Path, control: str):
    cfg = SweConfig.from_task_dir(python_task.path)
    CONTROLS[control](base_checkout, cfg, _f2p(python_task))
    grade.cache_clear()
    g = grade(base_checkout, python_task.path)
    with pytest.raises(AssertionError):
        g.assert_passing(g.fail_to_pass, "FAIL_TO_PASS")


def test_planted_conftest_would_cheat_without_restore(python_task: Task, base_checkout: Path, tmp_path: Path):
    """The control is meaningful: the same conftest turns failures into passes if left in place."""
    cfg = SweConfig.from_task_dir(python_task.path)
    repo = tmp_path / "repo"
    copy_repo(base_checkout, repo)
    apply_patch(repo, python_task.tests_dir / "test.patch")
    (repo / "conftest.py").write_text(PLANTED_CONFTEST)
    cheated = run_suite(repo, cfg)
    assert all(cheated.statuses[t] == PASSED for t in _f2p(python_task))


def test_build_failure_is_the_agents_failure(python_task: Task, base_checkout: Path):
    (base_checkout / "intervalset" / "core.py").write_text("this is not python(\n")
    run = run_state(base_checkout, python_task.path)
    assert run.report_error == "" and run.statuses  # pytest reports the import error per test module
    assert all(s != PASSED for s in run.statuses.values())


def test_a_suite_the_agents_code_makes_slow_is_its_failure_before_the_verifiers_limit(
        python_task: Task, base_checkout: Path, tmp_path: Path):
    """The library hangs the suite: grading stops it within the verifier's limit, copying and
    planting included, and fails the required tests, a failure of the agent's. Were the run left to
    the runner's clock, it would be a `verifier_error` nobody trains on."""
    task_dir = tmp_path / "task"
    shutil.copytree(python_task.path, task_dir)
    yaml_path = task_dir / "task.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("verify_timeout_s: 180", "verify_timeout_s: 30"))
    cfg = SweConfig.from_task_dir(task_dir)
    assert cfg.verify_timeout_s == 30
    core = base_checkout / "intervalset" / "core.py"
    core.write_text(core.read_text() + "\nimport time\ntime.sleep(3600)\n")
    started = time.monotonic()
    grade.cache_clear()
    g = grade(base_checkout, task_dir)
    assert time.monotonic() - started < cfg.verify_timeout_s
    assert g.run.timed_out
    with pytest.raises(AssertionError, match="did not finish in the time a run is given"):
        g.assert_passing(g.fail_to_pass, "FAIL_TO_PASS")


def test_missing_toolchain_is_an_env_fault(python_task: Task, base_checkout: Path, tmp_path: Path):
    task_dir = tmp_path / "task"
    shutil.copytree(python_task.path, task_dir)
    text = (task_dir / "task.yaml").read_text().replace("/usr/bin/python3 -m pytest --version", "/usr/bin/no-such-tool")
    (task_dir / "task.yaml").write_text(text)
    grade.cache_clear()
    with pytest.raises(EnvFault, match="toolchain missing"):
        grade(base_checkout, task_dir)


def test_protected_globs():
    pats = ("tests/**", "conftest.py", "**/*_test.go")
    assert is_protected("tests/a/b.py", pats) and is_protected("src/conftest.py", pats)
    assert is_protected("x/y_test.go", pats) and is_protected("y_test.go", pats)
    assert not is_protected("src/tests.py", pats) and not is_protected("testsx/a", pats)


def test_restore_does_not_follow_symlinks(tmp_path: Path, python_task: Task, base_checkout: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    copy_repo(base_checkout, repo)
    import shutil

    shutil.rmtree(repo / "tests")
    os.symlink(outside, repo / "tests")
    (repo / "extra_conftest_dir").mkdir()
    (repo / "extra_conftest_dir" / "conftest.py").write_text("raise SystemExit")
    restore_protected(repo, SweConfig.from_task_dir(python_task.path).protected_paths,
                      python_task.tests_dir / "protected.tar")
    assert not list(outside.iterdir())
    assert (repo / "tests").is_dir() and not (repo / "tests").is_symlink()
    assert (repo / "tests" / "test_core.py").is_file()
    assert not (repo / "extra_conftest_dir" / "conftest.py").exists()

