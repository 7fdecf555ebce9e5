"""SWE attacks: the code under test forges its report or ends the verifier (issue 11).

Each attack leaves a repository state a cheating policy could leave, judged by the production
verifier (`VerifierRunner`, real bubblewrap sandbox, real toolchains). Every one must score 0 with
a trainable failure class. The per-language forging controls run a day-seeded sample of languages
in CI; `ENVHUB_SECURITY_FULL=1` runs every language.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from envhub.config import get_settings
from envhub.core.hub import make_backend
from envhub.errors import FailureClass
from envhub.spec import VerifyResult
from envhub.tasks.model import Task
from envhub.verify.runner import VerifierRunner
from environments.swe.controls import CONTROLS
from environments.swe.repo import clone_base, config
from tests.swe.conftest import HAND_WRITTEN, load, require_toolchain
from verifiers.swe import apply_patch

PYTHON_TASK = "swe/python/interval-merge"
#: one task per language for the forging controls
LANGUAGE_TASKS = sorted(f"swe/{d.parent.name}/{d.name}" for d in HAND_WRITTEN
                        if d.name == min(x.name for x in HAND_WRITTEN if x.parent == d.parent))
SAMPLE = 3


def _sample(ids: list[str]) -> list[str]:
    if os.environ.get("ENVHUB_SECURITY_FULL"):
        return ids
    return sorted(random.Random(datetime.date.today().isoformat()).sample(ids, min(SAMPLE, len(ids))))


def judge(task: Task, state: Path) -> VerifyResult:
    """The production verdict on `state` (consumed)."""
    import asyncio

    settings = get_settings()
    backend = make_backend(settings)

    async def run() -> VerifyResult:
        try:
            return await VerifierRunner(settings, backend).verify(task, state)
        finally:
            await backend.aclose()

    return asyncio.run(run())


@pytest.fixture
def checkout() -> Iterator[callable]:
    """`checkout(task_id, gold=False)`: a throwaway base (or fixed) checkout of a task."""
    made: list[Path] = []

    def make(task_id: str, *, gold: bool = False) -> tuple[Task, Path]:
        task = load(task_id)
        require_toolchain(config(task).language)
        d = Path(tempfile.mkdtemp(prefix="swe-attack-", dir=get_settings().data_dir))
        d.chmod(0o755)
        made.append(d)
        clone_base(task, d / "repo")
        shutil.rmtree(d / "repo" / ".git", ignore_errors=True)
        if gold:
            apply_patch(d / "repo", task.solution_dir / "gold.patch")
        return task, d / "repo"

    yield make
    for d in made:
        shutil.rmtree(d, ignore_errors=True)


def _ids(task: Task) -> list[str]:
    raw = json.loads((task.tests_dir / "tests.json").read_text())
    return raw["FAIL_TO_PASS"] + raw["PASS_TO_PASS"]


def _package(repo: Path) -> Path:
    """The python task's package `__init__.py` (code every test imports)."""
    return next(p for p in sorted(repo.glob("*/__init__.py")) if p.parent.name != "tests")


def _assert_zero(result: VerifyResult, *, check: str | None = None) -> None:
    assert result.failure_class is FailureClass.ok, (result.failure_class, result.detail)
    assert result.trainable and result.reward == 0.0 and not result.passed
    if check:
        failed = {c.id for c in result.checks if not c.passed}
        assert check in failed, [(c.id, c.passed, c.message[:200]) for c in result.checks]


def _plant(repo: Path, code: str) -> None:
    init = _package(repo)
    init.write_text(init.read_text() + "\n" + code)


def test_python_runtest_replaced_from_code_under_test(checkout):
    """Code under test replaces `_pytest.python.Function.runtest` with a no-op."""
    task, repo = checkout(PYTHON_TASK)
    _plant(repo, "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n")
    _assert_zero(judge(task, repo), check="report_integrity")


def test_python_atexit_rewrites_junit_and_exits_0(checkout):
    """An atexit handler strips failures from the JUnit file in $REPORT_DIR and calls os._exit(0)."""
    task, repo = checkout(PYTHON_TASK)
    _plant(repo, "import atexit, glob, os, re\n\ndef _scrub():\n"
                 "    for f in glob.glob(os.path.join(os.environ.get('REPORT_DIR', '/nonexistent'), '*.xml')):\n"
                 "        t = open(f).read()\n"
                 "        t = re.sub(r'<(failure|error)\\b.*?</\\1>|<(failure|error)\\b[^>]*/>', '', t, flags=re.S)\n"
                 "        open(f, 'w').write(t)\n    os._exit(0)\n\natexit.register(_scrub)\n")
    _assert_zero(judge(task, repo), check="report_integrity")


def test_python_writes_report_and_exits_before_runner(checkout):
    """Code under test writes an all-pass JUnit report of the graded tests and exits 0 at import."""
    task, repo = checkout(PYTHON_TASK)
    CONTROLS["forge-report"](repo, config(task), _ids(task))
    _assert_zero(judge(task, repo), check="report_integrity")


def test_python_kill_everything_after_fix(checkout):
    """Fixed code that runs os.kill(-1, SIGKILL), then kills itself, at import: the agent's failure."""
    task, repo = checkout(PYTHON_TASK, gold=True)
    _plant(repo, "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass\n"
                 "os.kill(os.getpid(), signal.SIGKILL)\n")
    result = judge(task, repo)
    _assert_zero(result, check="fail_to_pass")
    message = next(c.message for c in result.checks if c.id == "fail_to_pass")
    assert "killed by SIGKILL" in message and "no usable test report" in message, message


@pytest.mark.parametrize("server_sigint", ["default", "ignored"])
def test_python_sigint_to_every_pytest(checkout, server_sigint):
    """Fixed code sends SIGINT to its parent and to every pytest process it can see (its own too).
    The verdict must not depend on how the server was launched: one started in the background by a
    script ignores SIGINT, and its sandboxes once inherited that (the attack then did nothing)."""
    task, repo = checkout(PYTHON_TASK, gold=True)
    _plant(repo, "import os, signal\nfor _p in os.listdir('/proc'):\n    if _p.isdigit():\n"
                 "        try:\n            if b'pytest' in open(f'/proc/{_p}/cmdline', 'rb').read():\n"
                 "                os.kill(int(_p), signal.SIGINT)\n        except OSError:\n            pass\n"
                 "os.kill(os.getppid(), signal.SIGINT)\n")
    inherited = signal.SIG_IGN if server_sigint == "ignored" else signal.default_int_handler
    previous = signal.signal(signal.SIGINT, inherited)
    try:
        result = judge(task, repo)
    finally:
        signal.signal(signal.SIGINT, previous)
    _assert_zero(result, check="fail_to_pass")


def test_python_fork_bomb_at_import(checkout):
    """Code under test forks until refused and keeps every child: the run ends, the verdict is the agent's."""
    task, repo = checkout(PYTHON_TASK)
    _plant(repo, "import os, time\nif not os.environ.get('ENVHUB_BOMBED'):\n    os.environ['ENVHUB_BOMBED'] = '1'\n"
                 "    while True:\n        try:\n            if os.fork() == 0:\n                time.sleep(100000)\n"
                 "        except OSError:\n            break\n")
    _assert_zero(judge(task, repo), check="fail_to_pass")


def test_javascript_noop_assert(checkout):
    """A module turns every function of node:assert and node:assert/strict into a no-op."""
    task, repo = checkout("swe/javascript/query-string")
    CONTROLS["forge-report"](repo, config(task), _ids(task))
    _assert_zero(judge(task, repo), check="report_integrity")


def test_go_init_prints_pass_lines(checkout):
    """A non-test file's init() prints `--- PASS` for every `func TestX(` of *_test.go and exits 0."""
    task, repo = checkout("swe/go/lru-evict")
    CONTROLS["forge-report"](repo, config(task), _ids(task))
    _assert_zero(judge(task, repo), check="report_integrity")


def test_rust_prints_libtest_ok_events(checkout):
    """Library code prints libtest JSON `ok` events for every #[test] name and exits 0."""
    task, repo = checkout("swe/rust/ring-buffer")
    CONTROLS["forge-report"](repo, config(task), _ids(task))
    _assert_zero(judge(task, repo), check="report_integrity")


def test_haskell_library_forges_through_unsafe_perform_io(checkout):
    """Haskell library functions force an `unsafePerformIO` value that forges the report and exits 0.

    GHC has no load-time hook; the value writes an all-pass JUnit report of the graded tests and
    exits through C's `exit` (an `exitWith` is an exception the test framework would catch)."""
    task, repo = checkout("swe/haskell/rle-codec")
    CONTROLS["forge-report"](repo, config(task), _ids(task))
    assert "envhubForge" in (repo / "src" / "Codec" / "RunLength.hs").read_text()
    result = judge(task, repo)
    _assert_zero(result, check="report_integrity")
    message = next(c.message for c in result.checks if c.id == "report_integrity")
    # built, ran, forged: the all-pass report lists the graded tests, not the twins planted beside them
    assert "the test report is forged" in message and "a planted copy of" in message, message


@pytest.mark.parametrize("task_id", _sample(LANGUAGE_TASKS))
def test_forged_report_in_each_language(checkout, task_id: str):
    """The per-language forging control (`forge-report`) scores 0 as the agent's failure."""
    task, repo = checkout(task_id)
    CONTROLS["forge-report"](repo, config(task), _ids(task))
    _assert_zero(judge(task, repo))
