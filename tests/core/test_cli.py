"""The CLI end to end (Typer's runner, real server in-process for `run`)."""

import json
import re
import subprocess
import sys
from collections import Counter

import pytest
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


def test_list_by_counts_tasks_per_metadata_value():
    from envhub.config import get_settings
    from envhub.tasks.catalog import Catalog

    tasks = Catalog(get_settings().tasks_dir).filter(env="swe")
    expected = Counter(t.config.metadata.get("language") or "-" for t in tasks)
    listed = runner.invoke(app, ["list", "--env", "swe", "--by", "language", "--json"])
    assert listed.exit_code == 0, listed.output
    counts = json.loads(listed.output)
    assert {c["language"]: c["tasks"] for c in counts} == expected
    assert all(0 <= c["validated"] <= c["tasks"] for c in counts)


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


def test_a_per_family_draw_takes_only_what_the_server_can_run(tmp_path):
    """`smoke --per-family` against a server that lacks the SWE factory's sources (a pool's replica
    built without them) draws among the tasks it serves as runnable, and says how many it skipped;
    a factory task there is unavailable, which says nothing of the task."""
    from envhub.cli.episodes import _draw
    from envhub.client import EnvClient
    from envhub.config import get_settings
    from envhub.server.thread import serve_in_thread
    from envhub.tasks.catalog import Catalog
    from envhub.verify import runtime

    site = runtime.site_dir(get_settings().data_dir)
    if not (site / ".envhub-stamp").is_file():
        pytest.skip("the verifier runtime is not installed: run `envhub setup`")
    data = tmp_path / "data"  # the verifier site shared, no SWE source store
    (data / "verifier").mkdir(parents=True)
    (data / "verifier" / "site").symlink_to(site)
    settings = get_settings().model_copy(update={"families": ["swe"], "store_enabled": False, "data_dir": data})
    tasks = Catalog(settings.tasks_dir).filter(env="swe")
    factory = {t.id for t in tasks if t.config.metadata.get("source")}
    assert factory and len(factory) < len(tasks)
    with serve_in_thread(settings) as server, EnvClient(server.url) as client:
        served = {t["id"]: t["unavailable"] for t in client.tasks(env="swe", limit=5000)}
        assert all(served[t] is not None for t in factory)  # no source store in this data dir
        drawn = _draw(client, tasks, 1000, 0, quiet=True)
    assert drawn and not {t.id for t in drawn} & factory
    assert {t.id for t in drawn} == {t for t, why in served.items() if why is None and t not in factory}


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


def _envhub(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "envhub.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80", **(env or {})})


@pytest.mark.parametrize(("args", "expected"), [
    (["run", "echo/say-done", "--agnet", "oracle"], "No such option: --agnet"),
    (["run", "echo/say-done", "--agent", "orcale"], "unknown agent 'orcale'; did you mean 'oracle'?"),
    (["serv"], "No such command 'serv'. Did you mean 'serve'?"),
    (["list", "--env", "dbb"], "unknown environment 'dbb'; did you mean 'db'?"),
    (["validate", "--env", "nosuch"], "unknown environment 'nosuch' (known: db, echo, office, swe, terminal)"),
    (["smoke", "--env", "ehco"], "unknown environment 'ehco'; did you mean 'echo'?"),
    (["episodes", "--env", "termnal"], "unknown environment 'termnal'; did you mean 'terminal'?"),
])
def test_typos_are_one_clear_line_and_exit_2(args: list[str], expected: str) -> None:
    """A typo in a CI gate must fail it (not pass with an empty table), in one line, not a traceback."""
    result = _envhub(*args)
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    assert expected in out and len(out.strip().splitlines()) == 1, out
    assert "Traceback" not in out


def test_run_uses_the_server_in_envhub_url(live_server) -> None:
    good = _envhub("run", "echo/say-done", "--json", env={"ENVHUB_URL": live_server.url})
    assert good.returncode == 0 and json.loads(good.stdout)["reward"] == 1.0, good.stdout + good.stderr
    # Nothing listens on port 9: had `run` ignored ENVHUB_URL it would have started its own server and passed.
    dead = _envhub("run", "echo/say-done", "--json", env={"ENVHUB_URL": "http://127.0.0.1:9"})
    assert dead.returncode == 2 and "reward" not in dead.stdout
    assert "cannot reach http://127.0.0.1:9/" in dead.stdout and "Traceback" not in dead.stdout + dead.stderr


def test_list_never_cuts_ids_in_a_narrow_terminal() -> None:
    from envhub.config import get_settings
    from envhub.tasks.catalog import Catalog

    ids = [t.id for t in Catalog(get_settings().tasks_dir).filter(env="db")]
    result = _envhub("list", "--env", "db")
    assert result.returncode == 0, result.stderr
    assert all(len(line) <= 80 for line in result.stdout.splitlines())
    rows = [line for line in result.stdout.splitlines() if line.lstrip().startswith("db/")]
    assert {line.split()[0] for line in rows} == set(ids)  # every id, whole
    assert all(re.search(r"\b(validated|unvalidated|stale|rejected)\b", line) for line in rows)  # and its status


def test_show_says_stale_when_the_task_changed_after_its_record(tmp_path) -> None:
    """The record still says `validated`; `show` must report what it is now (it once echoed the record)."""
    import shutil

    from envhub.config import REPO_ROOT
    from envhub.records import write_record
    from envhub.tasks.model import Task

    shutil.copytree(REPO_ROOT / "tasks" / "echo" / "say-done", tmp_path / "echo" / "say-done")
    task = Task.load(tmp_path / "echo" / "say-done")
    write_record(task, {"status": "validated", "runs": 3})
    (task.path / "prompt.md").write_text('Say "done", please.')
    shown = _envhub("show", "echo/say-done", "--json", env={"ENVHUB_TASKS_DIR": str(tmp_path)})
    validation = json.loads(shown.stdout)["validation"]
    assert validation["status"] == "stale" and validation["runs"] == 3


def test_family_commands_mount_under_their_family_and_their_old_names() -> None:
    """`Family.cli()` and `Family.cli_aliases`: the core names no family, yet the old commands work."""
    for args, usage in ((["terminal", "import", "--help"], "envhub terminal import"),
                        (["import", "harbor", "--help"], "envhub import harbor"),
                        (["import", "swebench", "--help"], "envhub import swebench"),
                        (["synth", "db", "--help"], "envhub synth db"),
                        (["synth", "office", "--help"], "envhub synth office"),
                        (["swe", "toolchains", "list", "--help"], "envhub swe toolchains list")):
        result = runner.invoke(app, args, prog_name="envhub")
        assert result.exit_code == 0 and f"Usage: {usage} " in result.output, (args, result.output)
    listed = runner.invoke(app, ["toolchains", "list", "python", "--json"])
    assert listed.exit_code == 0 and json.loads(listed.output)[0]["language"] == "python"


def test_core_commands_import_no_family_module() -> None:
    """Families load only when a family command (or the help) is asked for: `envhub list` and the
    rest never pay for importing them all."""
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom envhub.cli import app\n"
            "r = CliRunner().invoke(app, ['keys', 'new', 'ci', '--json'])\nassert r.exit_code == 0, r.output\n"
            "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('environments.')}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def test_a_budgeted_sample_draws_what_fits_and_never_a_task_over_the_budget() -> None:
    """CI's day-seeded SWE re-check: the recorded validation times of the drawn tasks add up to at
    most the budget, whichever day it is, and the draw is the seed's (the same tasks twice)."""
    from envhub.cli.validation import _draw
    from envhub.config import REPO_ROOT
    from envhub.tasks.catalog import Catalog

    tasks = Catalog(REPO_ROOT / "tasks").filter(env="swe")
    cost = {t.id: float((t.validation_record() or {}).get("seconds") or 0.0) for t in tasks}
    budget = sorted(cost.values())[len(cost) // 2] * 3  # a few typical tasks, fewer than the slowest
    assert max(cost.values()) > budget
    for seed in range(20):
        drawn = _draw(tasks, 6, seed, budget)
        assert drawn and len(drawn) <= 6
        assert sum(cost[t.id] for t in drawn) <= budget
        assert [t.id for t in _draw(tasks, 6, seed, budget)] == [t.id for t in drawn]
    assert len(_draw(tasks, 6, 1, 0)) == 6  # no budget: the count alone
