"""Importing SWE-bench-format instances from a local repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from envhub.tasks.model import Task
from environments.swe.importer import import_swebench, load_instances
from environments.swe.repo import clone_base, git
from tests.swe.conftest import require_toolchain
from verifiers.swe import PASSED, apply_patch, run_state

LIB = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n\n\ndef sign(x):\n    return 1 if x > 0 else -1\n"
TESTS = "".join(f"def test_clamp_{i}():\n    from mathlib import clamp\n    assert clamp({i}, 0, 3) == {min(i, 3)}\n\n\n"
                for i in range(6))


def _diff(repo: Path, path: str, content: str) -> str:
    (repo / path).write_text(content)
    patch = git("diff", "--no-color", cwd=repo)
    git("checkout", "-q", "--", path, cwd=repo)
    return patch


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, dict]:
    repo = tmp_path / "upstream"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    (repo / "mathlib.py").write_text(LIB)
    (repo / "test_math.py").write_text(TESTS)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "base", cwd=repo)
    base = git("rev-parse", "HEAD", cwd=repo).strip()
    test_patch = _diff(repo, "test_math.py", TESTS + "def test_sign_zero():\n    from mathlib import sign\n"
                                                     "    assert sign(0) == 0\n")
    gold = _diff(repo, "mathlib.py", LIB.replace("return 1 if x > 0 else -1",
                                                 "return (x > 0) - (x < 0)"))
    (repo / "later.txt").write_text("a later commit the agent must not see\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "later", cwd=repo)
    inst = {"instance_id": "acme__mathlib-7", "repo": "acme/mathlib", "base_commit": base, "patch": gold,
            "test_patch": test_patch, "problem_statement": "sign(0) should be 0\n\nIt returns -1.",
            "FAIL_TO_PASS": json.dumps(["test_math#test_sign_zero"]),
            "PASS_TO_PASS": json.dumps([f"test_math#test_clamp_{i}" for i in range(6)])}
    return repo, inst


def test_load_instances_formats(tmp_path: Path, upstream):
    _, inst = upstream
    for text in (json.dumps([inst]), json.dumps(inst), json.dumps(inst) + "\n" + json.dumps(inst) + "\n"):
        (tmp_path / "i.json").write_text(text)
        assert load_instances(tmp_path / "i.json")[0]["instance_id"] == "acme__mathlib-7"
    (tmp_path / "i.json").write_text(json.dumps({"instance_id": "x"}))
    with pytest.raises(ValueError, match="missing"):
        load_instances(tmp_path / "i.json")


def test_import_and_grade(tmp_path: Path, upstream):
    require_toolchain("python")
    repo, inst = upstream
    (tmp_path / "instances.jsonl").write_text(json.dumps(inst) + "\n")
    [dest] = import_swebench(tmp_path / "instances.jsonl", repo, tmp_path / "tasks" / "swe", "python",
                             "/usr/bin/python3 -m pytest -q -p no:cacheprovider "
                             "--junitxml=$REPORT_DIR/junit.xml test_math.py", "junit_xml")
    task = Task.load(dest)
    assert task.id == "swe/python/acme__mathlib-7" and task.prompt.startswith("sign(0)")
    assert json.loads((dest / "tests" / "tests.json").read_text())["FAIL_TO_PASS"] == ["test_math#test_sign_zero"]
    assert task.config.metadata["protected_paths"] == ["test_math.py"]
    checkout = tmp_path / "checkout"
    clone_base(task, checkout)
    assert not (checkout / "later.txt").exists()
    log = subprocess.run(["git", "log", "--all", "--oneline"], cwd=checkout, capture_output=True, text=True).stdout
    assert len(log.splitlines()) == 1
    before = run_state(checkout, dest)
    assert not before.problem(), before.problem()
    assert before.statuses["test_math#test_sign_zero"] != PASSED
    assert before.statuses["test_math#test_clamp_0"] == PASSED
    apply_patch(checkout, dest / "solution" / "gold.patch")
    assert run_state(checkout, dest).statuses["test_math#test_sign_zero"] == PASSED


def test_import_command(tmp_path: Path, upstream):
    from typer.testing import CliRunner

    from envhub.cli import app

    repo, inst = upstream
    (tmp_path / "instances.json").write_text(json.dumps([inst]))
    args = ["import", "swebench", str(tmp_path / "instances.json"), "--repo", str(repo), "--language", "python",
            "--test-command", "/usr/bin/python3 -m pytest -q --junitxml=$REPORT_DIR/junit.xml test_math.py",
            "--dest", str(tmp_path / "tasks" / "swe")]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    [folder] = json.loads(result.output)
    assert Task.load(Path(folder)).id == "swe/python/acme__mathlib-7"
    bad = CliRunner().invoke(app, [*args, "--report-format", "console"])
    assert bad.exit_code == 2 and "unknown report format" in bad.output
