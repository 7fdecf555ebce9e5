"""The verifier runner: out-of-band results, isolation, and failure classes."""

from pathlib import Path

import pytest

from envhub.errors import FailureClass
from envhub.spec import CheckResult
from envhub.tasks.model import Task
from envhub.verify.verdict import score_checks


def make_task(tmp_path: Path, test_body: str, verify_timeout: int = 30) -> Task:
    d = tmp_path / "tasks" / "echo" / "probe"
    (d / "tests").mkdir(parents=True)
    (d / "task.yaml").write_text(f"id: echo/probe\nfamily: echo\ntitle: probe\n"
                                 f"limits: {{verify_timeout_s: {verify_timeout}}}\n")
    (d / "prompt.md").write_text("probe")
    (d / "tests" / "test_probe.py").write_text(test_body)
    return Task.load(d)


def state(tmp_path: Path, files: dict[str, str]) -> Path:
    s = tmp_path / "state"
    s.mkdir(exist_ok=True)
    for rel, text in files.items():
        (s / rel).parent.mkdir(parents=True, exist_ok=True)
        (s / rel).write_text(text)
    return s


PASSING = "from verifiers import STATE, check\n\n@check('has-ok')\ndef test_ok():\n" \
          "    assert (STATE / 'ok.txt').read_text() == 'ok'\n"


async def test_pass_and_fail(hub, tmp_path):
    task = make_task(tmp_path, PASSING)
    good = await hub.manager.judge(task, state(tmp_path, {"ok.txt": "ok"}), [])
    assert (good.failure_class, good.reward, good.passed) == (FailureClass.ok, 1.0, True)
    bad = await hub.manager.judge(task, state(tmp_path, {}), [])
    assert (bad.failure_class, bad.reward, bad.passed) == (FailureClass.ok, 0.0, False)
    assert bad.checks[0].id == "has-ok" and "ok.txt" in bad.checks[0].message


async def test_a_planted_conftest_and_forged_results_are_ignored(hub, tmp_path):
    task = make_task(tmp_path, PASSING)
    planted = state(tmp_path, {
        "conftest.py": "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                       "    o = yield\n    o.get_result().outcome = 'passed'\n",
        "result.json": '{"reward": 1.0, "passed": true}'})
    result = await hub.manager.judge(task, planted, [])
    assert result.failure_class is FailureClass.ok and not result.passed


async def test_verifier_crash_is_a_verifier_error(hub, tmp_path):
    task = make_task(tmp_path, "import this_module_does_not_exist\n\ndef test_x():\n    pass\n")
    result = await hub.manager.judge(task, state(tmp_path, {}), [])
    assert result.failure_class is FailureClass.verifier_error and not result.trainable and result.retryable


async def test_verifier_timeout_is_a_verifier_error(hub, tmp_path):
    task = make_task(tmp_path, "import time\n\ndef test_slow():\n    time.sleep(60)\n", verify_timeout=2)
    result = await hub.manager.judge(task, state(tmp_path, {}), [])
    assert result.failure_class is FailureClass.verifier_error and "timed out" in result.detail


async def test_env_fault_is_an_env_error(hub, tmp_path):
    task = make_task(tmp_path, "from verifiers import EnvFault\n\ndef test_x():\n    raise EnvFault('db gone')\n")
    result = await hub.manager.judge(task, state(tmp_path, {}), [])
    assert result.failure_class is FailureClass.env_error and "db gone" in result.detail


async def test_verifier_has_no_network_and_cannot_write_state(hub, tmp_path):
    body = ("import socket\nfrom verifiers import STATE\n\ndef test_net():\n"
            "    s = socket.socket()\n    s.settimeout(2)\n    s.connect(('1.1.1.1', 80))\n\n"
            "def test_ro():\n    (STATE / 'x').write_text('x')\n")
    task = make_task(tmp_path, body)
    result = await hub.manager.judge(task, state(tmp_path, {}), [])
    assert result.failure_class is FailureClass.ok
    assert [c.passed for c in result.checks] == [False, False]


@pytest.mark.parametrize("checks,expected", [
    ([("hard", True, 1.0, 1)], (1.0, True)),
    ([("hard", False, 0.0, 1), ("soft", True, 1.0, 1)], (0.0, False)),
    ([("hard", True, 1.0, 1), ("soft", True, 1.0, 1), ("soft", False, 0.0, 3)], (0.25, True)),
    ([("hard", True, 1.0, 1), ("quality", True, 0.5, 1)], (0.85, True)),
    ([("hard", False, 0.0, 1), ("quality", True, 1.0, 1)], (0.0, False)),
])
def test_reward_is_gate_times_weighted_checks(checks, expected):
    parsed = [CheckResult(id=f"c{i}", kind=k, passed=p, score=s, weight=w) for i, (k, p, s, w) in enumerate(checks)]
    assert score_checks(parsed) == expected
