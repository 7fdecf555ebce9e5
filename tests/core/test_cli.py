"""The CLI end to end (Typer's runner, real server in-process for `run`)."""

import json
import subprocess
import sys

from typer.testing import CliRunner

from envhub.cli import app

runner = CliRunner()


def test_list_and_show_print_json():
    listed = runner.invoke(app, ["list", "--env", "echo", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [r["id"] for r in json.loads(listed.output)] == ["echo/say-done"]
    shown = runner.invoke(app, ["show", "echo/say-done", "--json"])
    assert shown.exit_code == 0, shown.output
    info = json.loads(shown.output)
    assert info["tools"] == ["echo"] and "solution" not in shown.output


def test_run_drives_an_episode_through_the_http_api():
    oracle = runner.invoke(app, ["run", "echo/say-done", "--agent", "oracle", "--json"])
    assert oracle.exit_code == 0, oracle.output
    assert json.loads(oracle.output)["reward"] == 1.0
    noop = runner.invoke(app, ["run", "echo/say-done", "--agent", "noop", "--json"])
    assert json.loads(noop.output)["reward"] == 0.0


def test_smoke_expects_the_oracle_to_pass_and_noop_to_fail(monkeypatch):
    good = runner.invoke(app, ["smoke", "echo/say-done", "terminal/count-error-lines", "--json"])
    assert good.exit_code == 0, good.output
    rows = json.loads(good.output)["episodes"]
    assert [(r["task_id"], r["agent"], r["reward"], r["ok"]) for r in rows] == [
        ("echo/say-done", "oracle", 1.0, True), ("echo/say-done", "noop", 0.0, True),
        ("terminal/count-error-lines", "oracle", 1.0, True), ("terminal/count-error-lines", "noop", 0.0, True)]
    # An oracle that does nothing is caught as a failed smoke, with the reason.
    from environments.echo import EchoFamily

    monkeypatch.setattr(EchoFamily, "oracle_actions", lambda self, task: [])
    bad = runner.invoke(app, ["smoke", "echo/say-done", "--json"])
    assert bad.exit_code == 1
    oracle = json.loads(bad.output)["episodes"][0]
    assert oracle["agent"] == "oracle" and not oracle["ok"] and oracle["reward"] == 0.0


def test_unknown_task_is_one_clear_line_not_a_traceback():
    result = subprocess.run([sys.executable, "-m", "envhub.cli", "show", "echo/say-dne"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert "unknown task 'echo/say-dne'; did you mean 'echo/say-done'?" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_a_failing_command_exits_non_zero():
    result = subprocess.run([sys.executable, "-m", "envhub.cli", "conformance", "http://127.0.0.1:9"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "0 passed" in result.stdout
