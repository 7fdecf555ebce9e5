"""Multi-step Harbor tasks (`[[steps]]`, issue 40): one envhub task per step, each starting from the
state the earlier steps leave in Harbor's one container (their `workdir/` files, `setup.sh` and
solutions, replayed offline at import), with the step's own instruction, tests and limits.

The fixture (tests/terminal/fixtures/harbor/greet-steps) builds a greeting script in three steps;
the second lays a file and runs a setup hook first, the third has a test.sh of its own.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import yaml
from typer.testing import CliRunner

from envhub.cli import app
from envhub.core.hub import Hub
from envhub.errors import TaskFormatError
from envhub.spec import ResetRequest, StepRequest
from envhub.tasks.model import Task
from environments.terminal import TerminalFamily
from environments.terminal.harbor import import_all
from tests.conftest import running_hub

FIXTURE = Path(__file__).parent / "fixtures" / "harbor" / "greet-steps"
IDS = ["terminal/harbor/greet-steps-01-scaffold", "terminal/harbor/greet-steps-02-configure",
       "terminal/harbor/greet-steps-03-finish"]


@pytest.fixture(scope="module")
def steps_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("harbor-steps") / "tasks"
    import_all(FIXTURE, root)
    return root


def load(root: Path, task_id: str) -> Task:
    return Task.load(root / task_id)


def state_of(task: Task) -> dict[str, str]:
    return {p.relative_to(task.state_dir).as_posix(): p.read_text() for p in sorted(task.state_dir.rglob("*"))
            if p.is_file()}


def test_each_step_is_a_task_that_starts_where_the_earlier_steps_left(steps_root: Path) -> None:
    first, second, third = (load(steps_root, i) for i in IDS)
    assert [t.id for t in (first, second, third)] == IDS
    # step 1: the image's work dir only
    assert state_of(first) == {"notes.txt": "Scripts go in /workspace (the work dir).\n"}
    # step 2: step 1's solution ran, then this step's workdir/ was laid and its setup.sh ran (and is gone)
    assert state_of(second) == {"notes.txt": "Scripts go in /workspace (the work dir).\n",
                                "greet.sh": "#!/bin/bash\necho hello\n", "name.txt": "Ada\n",
                                "conf/greeting": "Hello\n"}
    assert os.access(second.state_dir / "greet.sh", os.X_OK)
    # step 3: step 2's solution rewrote the script
    assert "conf/greeting" in state_of(third)["greet.sh"] and "setup.sh" not in state_of(third)
    # each step's own instruction; later steps say the earlier work is there
    assert first.prompt.startswith("Create an executable script `/workspace/greet.sh`") and "Step" not in first.prompt
    assert "`/workspace/conf/greeting`" in second.prompt and "Step 2 of 3" in second.prompt
    assert "--shout" in third.prompt and "Step 3 of 3" in third.prompt
    # each step's limits over the task's
    assert (first.config.limits.episode_timeout_s, first.config.limits.verify_timeout_s) == (120, 90)
    assert (second.config.limits.episode_timeout_s, second.config.limits.verify_timeout_s) == (300, 60)
    assert (third.config.limits.episode_timeout_s, third.config.limits.verify_timeout_s) == (300, 90)
    # the step's tests over the task's: its check.sh beside the shared test.sh; the third's own test.sh wins
    hidden = [sorted(p.name for p in (t.tests_dir / ".harbor").iterdir()) for t in (first, second, third)]
    assert hidden == [["check.sh", "test.sh"], ["check.sh", "test.sh"], ["test.sh"]]
    assert "--shout" in (third.tests_dir / ".harbor" / "test.sh").read_text()
    assert '"$NAME_FILE"' in (second.tests_dir / ".harbor" / "check.sh").read_text()
    # the metadata names the parent and the step
    steps = [t.config.metadata["harbor"]["multi_step"] for t in (first, second, third)]
    assert [(s["parent"], s["step"], s["index"], s["of"]) for s in steps] == \
        [("envhub/greet-steps", "scaffold", 1, 3), ("envhub/greet-steps", "configure", 2, 3),
         ("envhub/greet-steps", "finish", 3, 3)]
    assert steps[0]["min_reward"] == 1.0 and steps[0]["reward_strategy"] == "final"
    assert "step scaffold's workdir/, setup.sh and solution" in steps[2]["state"]
    # a step's field is warned about in its own task only
    notes = [t.config.metadata["harbor"]["unsupported_setup"] for t in (first, second, third)]
    assert [any(n.startswith("steps[0].min_reward") for n in ns) for ns in notes] == [True, False, False]
    assert all(any(n.startswith("multi_step_reward_strategy") for n in ns) for ns in notes)


@pytest_asyncio.fixture(loop_scope="module")
async def steps_hub(make_settings, steps_root: Path) -> AsyncIterator[Hub]:
    async with running_hub(make_settings(steps_root)) as h:
        yield h


@pytest.mark.asyncio(loop_scope="module")
async def test_every_steps_oracle_passes_and_doing_nothing_fails(steps_hub: Hub) -> None:
    m = steps_hub.manager
    for task_id in IDS:
        task = m.catalog.get(task_id)
        s = await m.create(ResetRequest(env="terminal", task_id=task_id))
        for call in TerminalFamily().oracle_actions(task):
            res = await m.step(s.session_id, StepRequest(action=call))
            assert not res.observation.is_error, (task_id, res.observation.text[-2000:])
        v = await m.verify(s.session_id)
        assert (v.failure_class, v.reward) == ("ok", 1.0), (task_id, v.detail, v.checks)
        await m.close(s.session_id)
        noop = await m.create(ResetRequest(env="terminal", task_id=task_id))
        v = await m.verify(noop.session_id)
        assert (v.failure_class, v.reward) == ("ok", 0.0), (task_id, v.detail, v.checks)
        await m.close(noop.session_id)


def copy_fixture(tmp_path: Path) -> Path:
    src = tmp_path / "greet-steps"
    shutil.copytree(FIXTURE, src)
    return src


def refusal(src: Path, tmp_path: Path, **kw) -> str:
    with pytest.raises(TaskFormatError) as e:
        import_all(src, tmp_path / "tasks", **kw)
    line = str(e.value.detail)
    assert "\n" not in line, line
    assert not list((tmp_path / "tasks").rglob("task.yaml")), "a refused import leaves nothing"
    return line


def test_a_middle_step_without_a_solution_is_refused_naming_it(tmp_path: Path) -> None:
    src = copy_fixture(tmp_path)
    shutil.rmtree(src / "steps" / "configure" / "solution")
    line = refusal(src, tmp_path)
    assert "steps[1] (configure)" in line and "no steps/configure/solution/solve.sh" in line


def test_an_earlier_solution_that_fails_refuses_the_import(tmp_path: Path) -> None:
    src = copy_fixture(tmp_path)
    (src / "steps" / "scaffold" / "solution" / "solve.sh").write_text("#!/bin/bash\necho broken >&2\nexit 3\n")
    line = refusal(src, tmp_path)
    assert "steps[0] (scaffold)" in line and "exits 3" in line and "step configure's starting state" in line
    assert "broken" in line


def test_files_only_replay_cannot_make_the_later_states(tmp_path: Path) -> None:
    line = refusal(copy_fixture(tmp_path), tmp_path, replay_steps=False)
    assert line.endswith("steps: not imported with --replay none (the earlier steps' solutions must run to make "
                         "each step's starting state)")


@pytest.mark.parametrize(("edit", "says"), [
    (lambda toml: toml.replace('name = "finish"', 'name = "absent"'), "steps[2].name = 'absent': no folder"),
    (lambda toml: toml.replace('name = "finish"', 'name = "scaffold"'), "steps[2].name = 'scaffold': must be a "
                                                                         "unique folder name"),
    (lambda toml: toml.replace('name = "finish"', 'name = "../up"'), "steps[2].name"),
    (lambda toml: toml + '\n[steps.verifier.environment]\ncpus = 2\n', "steps[2].verifier.environment"),
    (lambda toml: toml.replace("multi_step_reward_strategy", "steps = []\nmulti_step_reward_strategy")
     .split("[[steps]]")[0], "steps = []: must be 1 to 50"),
])
def test_a_malformed_steps_table_is_one_line_naming_the_field(tmp_path: Path, edit, says: str) -> None:
    src = copy_fixture(tmp_path)
    (src / "task.toml").write_text(edit((src / "task.toml").read_text()))
    assert says in refusal(src, tmp_path)


def test_a_step_that_needs_the_network_is_the_only_one_unavailable(tmp_path: Path) -> None:
    src = copy_fixture(tmp_path)
    toml = (src / "task.toml").read_text()
    toml = toml.replace("timeout_sec = 30.0\n", 'timeout_sec = 30.0\nnetwork_mode = "public"\n')  # step 2's tests
    (src / "task.toml").write_text(toml)
    outs = import_all(src, tmp_path / "tasks")
    missing = [TerminalFamily().availability(Task.load(o)) for o in outs]
    assert missing[0] is None and missing[2] is None
    assert missing[1] is not None and "steps[1].verifier.network_mode = public" in missing[1].reason
    assert "requires" not in yaml.safe_load((outs[0] / "task.yaml").read_text())["metadata"]


def test_the_cli_row_names_every_steps_task(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["import", "harbor", str(FIXTURE), "--dest", str(tmp_path / "tasks"), "--json"])
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["status"] == "imported" and row["ids"] == IDS and row["id"] == ", ".join(IDS)


def test_a_link_in_a_steps_workdir_that_leaves_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("envhub-step-secret\n")
    src = copy_fixture(tmp_path)
    os.symlink(secret, src / "steps" / "configure" / "workdir" / "leak.txt")
    printed: list[str] = []
    outs = import_all(src, tmp_path / "tasks", log=printed.append)
    assert not (outs[1] / "state" / "leak.txt").exists()
    assert not any("envhub-step-secret" in p.read_text(errors="replace") for o in outs for p in o.rglob("*")
                   if p.is_file() and not p.name.endswith(".gz"))
    assert any("leak.txt" in line and "leaves" in line for line in printed), printed
