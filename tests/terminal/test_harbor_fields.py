"""Every field of Harbor's task.toml and Terminal-Bench 1's task.yaml is accounted for (issue 40):
honoured, a reason the task is unavailable here, refused with a reason, or ignored with a warning;
never ignored silently. The code's tables are the one source, and README shows them.

A task that needs the network is imported but unavailable here, with the reason, wherever a user
looks (`envhub list`, `envhub validate`, a reset).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from envhub.errors import TaskFormatError
from envhub.tasks.model import Task
from environments.terminal import TerminalFamily
from environments.terminal.harbor import (
    HONOURED,
    NOT_HONOURED,
    REFUSED,
    TB_HONOURED,
    TB_NOT_HONOURED,
    UNAVAILABLE,
    field_table,
    import_harbor,
)
from tests.terminal.test_harbor_security import TOML, make_task

README = Path(__file__).resolve().parents[2] / "README.md"

#: Harbor's task.toml schema 1.4, field by field, as its `TaskConfig` (src/harbor/models/task/config.py:
#: TaskConfig, PackageInfo, AgentConfig, VerifierConfig, SolutionConfig, EnvironmentConfig, StepConfig)
#: declares them. A field Harbor adds must be classified before this passes.
HARBOR_FIELDS = [
    "schema_version", "version", "source", "multi_step_reward_strategy", "artifacts", "metadata",
    "task.name", "task.version", "task.description", "task.authors", "task.keywords",
    "agent.timeout_sec", "agent.user", "agent.network_mode", "agent.allowed_hosts",
    "verifier.timeout_sec", "verifier.env", "verifier.user", "verifier.network_mode", "verifier.allowed_hosts",
    "verifier.environment_mode", "verifier.environment", "verifier.collect",
    "solution.env",
    "environment.build_timeout_sec", "environment.docker_image", "environment.os", "environment.cpus",
    "environment.memory_mb", "environment.storage_mb", "environment.gpus", "environment.gpu_types",
    "environment.tpu", "environment.mcp_servers", "environment.env", "environment.skills_dir",
    "environment.healthcheck", "environment.workdir", "environment.allow_internet", "environment.network_mode",
    "environment.allowed_hosts", "environment.memory", "environment.storage",
    "steps", "steps[].name", "steps[].agent.timeout_sec", "steps[].agent.user", "steps[].agent.network_mode",
    "steps[].agent.allowed_hosts", "steps[].verifier.timeout_sec", "steps[].verifier.env", "steps[].verifier.user",
    "steps[].verifier.network_mode", "steps[].verifier.allowed_hosts", "steps[].verifier.environment_mode",
    "steps[].verifier.environment", "steps[].verifier.collect", "steps[].min_reward", "steps[].healthcheck",
    "steps[].artifacts",
]
#: Terminal-Bench 1's task.yaml (terminal_bench/handlers/trial_handler.py: Task), and the oldest
#: tasks' `descriptions`.
TB_FIELDS = ["instruction", "descriptions", "author_name", "author_email", "difficulty", "category", "tags",
             "parser_name", "max_agent_timeout_sec", "max_test_timeout_sec", "run_tests_in_same_shell",
             "disable_asciinema", "estimated_duration_sec", "expert_time_estimate_min", "junior_time_estimate_min"]
TABLES = {"honoured": HONOURED, "unavailable": UNAVAILABLE, "refused": REFUSED, "not honoured": NOT_HONOURED}


def classified(name: str) -> list[str]:
    """The tables that classify `name`, itself or a table above it (`verifier.environment`
    covers `verifier.environment.cpus`; `steps` covers no `steps[].x`)."""
    return [kind for kind, table in TABLES.items() if any(name == k or name.startswith(k + ".") for k in table)]


@pytest.mark.parametrize("name", HARBOR_FIELDS)
def test_every_harbor_field_is_classified(name: str) -> None:
    assert classified(name), f"{name}: in none of HONOURED, UNAVAILABLE, REFUSED, NOT_HONOURED"


def test_no_field_is_in_two_tables() -> None:
    names = [n for table in TABLES.values() for n in table]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert not set(TB_HONOURED) & set(TB_NOT_HONOURED)


@pytest.mark.parametrize("key", TB_FIELDS)
def test_every_terminal_bench_key_is_classified(key: str) -> None:
    assert key in TB_HONOURED or key in TB_NOT_HONOURED, key


def test_readme_shows_the_codes_table() -> None:
    table = field_table()
    assert table in README.read_text(encoding="utf-8"), \
        "README's field table differs from field_table() (environments/terminal/harbor.py): paste it again"
    for name in (*HONOURED, *UNAVAILABLE, *REFUSED, *NOT_HONOURED):
        assert f"| `{name}` |" in table


def test_a_task_that_sets_every_field_gets_no_unknown_field_warning(tmp_path: Path) -> None:
    """Every field of the schema a single-step task may set, at a value envhub can serve: each is
    acted on (honoured, or one line saying why not), none is unknown to the importer."""
    toml = """schema_version = "1.4"
source = "https://example.org/tasks"
artifacts = ["/app/out.txt"]
[task]
name = "org/every-field"
version = "0.3.0"
description = "Every field"
authors = [{ name = "A", email = "a@x" }]
keywords = ["k"]
[metadata]
difficulty = "easy"
[agent]
timeout_sec = 120.0
user = "agent"
network_mode = "no-network"
[verifier]
timeout_sec = 60.0
env = { V = "1" }
user = "root"
network_mode = "no-network"
environment_mode = "shared"
collect = []
[solution]
env = { S = "2" }
[environment]
build_timeout_sec = 60.0
docker_image = "x/y:1"
os = "linux"
cpus = 1
memory_mb = 1024
memory = "1G"
storage_mb = 1024
storage = "1G"
gpus = 0
gpu_types = []
mcp_servers = []
env = { E = "${E:-three}", SECRET = "${HOST_TOKEN}" }
skills_dir = "/skills"
workdir = "/app"
allow_internet = false
network_mode = "no-network"
allowed_hosts = []
[environment.healthcheck]
command = "true"
"""
    printed: list[str] = []
    out = import_harbor(make_task(tmp_path / "src", toml=toml), tmp_path / "tasks", replay_steps=False,
                        log=printed.append)
    warned = [line.removeprefix("warning: ") for line in printed if line.startswith("warning: ")]
    assert not [w for w in warned if "unknown to the importer" in w], warned
    for name in ("environment.docker_image", "environment.skills_dir", "environment.healthcheck", "agent.user",
                 "verifier.user", "artifacts", "environment.storage_mb", "environment.env.SECRET"):
        assert any(w.startswith(name) for w in warned), (name, warned)
    task = Task.load(out)
    harbor = task.config.metadata["harbor"]
    assert "requires" not in task.config.metadata and TerminalFamily().availability(task) is None
    assert (harbor["task_version"], harbor["schema_version"], harbor["upstream_source"]) == \
        ("0.3.0", "1.4", "https://example.org/tasks")
    solve = (out / "solution" / "solve.sh").read_text()
    assert "export E=three" in solve and "export S=2" in solve and "SECRET" not in solve and "HOST_TOKEN" not in solve
    assert "export E=three" in task.prompt


@pytest.mark.parametrize(("extra", "field"), [
    ('[environment]\nos = "windows"\n', "environment.os"),
    ('[verifier]\nenvironment_mode = "separate"\n', "verifier.environment_mode"),
    ('[verifier.environment]\ncpus = 2\n', "verifier.environment"),
    ('[[verifier.collect]]\ncommand = "pg_dump > /app/db.sql"\n', "verifier.collect"),
])
def test_a_refused_field_is_one_line_naming_it(tmp_path: Path, extra: str, field: str) -> None:
    toml = '[task]\nname = "t"\n' + extra
    with pytest.raises(TaskFormatError) as e:
        import_harbor(make_task(tmp_path / "src", toml=toml), tmp_path / "tasks", replay_steps=False)
    line = str(e.value.detail)
    assert "\n" not in line and field in line and "not imported" in line
    assert not (tmp_path / "tasks" / "terminal" / "harbor" / "t").exists()


def test_a_prebuilt_image_without_a_dockerfile_is_refused(tmp_path: Path) -> None:
    toml = TOML.format(name="t") + 'docker_image = "ghcr.io/x/y:1"\n'
    with pytest.raises(TaskFormatError, match="environment.docker_image.*no environment/Dockerfile"):
        import_harbor(make_task(tmp_path / "src", dockerfile=None, toml=toml), tmp_path / "tasks",
                      replay_steps=False)


def test_an_unknown_field_is_a_warning(tmp_path: Path) -> None:
    toml = "shiny_new = 1\n" + TOML.format(name="t") + "glitter = true\n[novel]\nx = 1\n"
    printed: list[str] = []
    out = import_harbor(make_task(tmp_path / "src", toml=toml), tmp_path / "tasks", replay_steps=False,
                        log=printed.append)
    notes = yaml.safe_load((out / "task.yaml").read_text())["metadata"]["harbor"]["unsupported_setup"]
    for name in ("shiny_new = 1", "environment.glitter = True", "[novel]"):
        assert any(name in n and "unknown to the importer" in n for n in notes), (name, notes)
        assert any(name in line for line in printed if line.startswith("warning: ")), (name, printed)


# -- the network ---------------------------------------------------------------------------------------
NETWORK_CASES = [
    ("[environment]\nallow_internet = true\n", "the agent: environment.allow_internet = true"),
    ('[environment]\nnetwork_mode = "public"\n', "the tests: environment.network_mode = public"),
    ('[environment]\nallowed_hosts = ["pypi.org"]\n', "the agent: environment.allowed_hosts"),
    ('[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["api.example.org"]\n',
     "the agent: agent.network_mode = allowlist"),
    ('[verifier]\nnetwork_mode = "public"\n', "the tests: verifier.network_mode = public"),
]


@pytest.mark.parametrize(("toml", "said"), NETWORK_CASES)
def test_a_task_that_needs_the_network_is_imported_unavailable(tmp_path: Path, toml: str, said: str) -> None:
    printed: list[str] = []
    out = import_harbor(make_task(tmp_path / "src", toml='[task]\nname = "net"\n' + toml), tmp_path / "tasks",
                        replay_steps=False, log=printed.append)
    task = Task.load(out)
    assert said in task.config.metadata["requires"]["network"]
    missing = TerminalFamily().availability(task)
    assert missing is not None and said in missing.reason and "offline" in missing.reason
    assert any(line.startswith("warning: unavailable here: the task needs network") for line in printed), printed


@pytest.mark.parametrize("toml", [
    "[environment]\nallow_internet = false\n",
    '[environment]\nnetwork_mode = "no-network"\n',
    # the image may need the network to build; neither phase does
    '[environment]\nallow_internet = true\n[agent]\nnetwork_mode = "no-network"\n'
    '[verifier]\nnetwork_mode = "no-network"\n',
    "",  # says nothing: Harbor's permissive default is no need
])
def test_a_task_that_runs_offline_is_available(tmp_path: Path, toml: str) -> None:
    printed: list[str] = []
    out = import_harbor(make_task(tmp_path / "src", toml='[task]\nname = "off"\n' + toml), tmp_path / "tasks",
                        replay_steps=False, log=printed.append)
    task = Task.load(out)
    assert "requires" not in task.config.metadata and TerminalFamily().availability(task) is None
    assert not [line for line in printed if "network" in line], printed


def test_a_gpu_task_is_unavailable_and_says_which_field(tmp_path: Path) -> None:
    out = import_harbor(make_task(tmp_path / "src", toml=TOML.format(name="g") + "gpus = 2\n"), tmp_path / "tasks",
                        replay_steps=False)
    missing = TerminalFamily().availability(Task.load(out))
    assert missing is not None and "environment.gpus = 2" in missing.reason and "no GPU" in missing.reason


def test_list_and_validate_show_and_skip_the_network_task(tmp_path: Path) -> None:
    root = tmp_path / "tasks"
    import_harbor(make_task(tmp_path / "net", toml=TOML.format(name="net") + "allow_internet = true\n"), root,
                  replay_steps=False)
    import_harbor(make_task(tmp_path / "off", toml=TOML.format(name="off")), root, replay_steps=False)
    env = {**os.environ, "ENVHUB_TASKS_DIR": str(root), "COLUMNS": "200"}  # the suite's data folder
    envhub = str(Path(sys.executable).parent / "envhub")
    rows = {r["id"]: r["unavailable"] for r in json.loads(subprocess.run(
        [envhub, "list", "--env", "terminal", "--json"], env=env, check=True, capture_output=True, text=True).stdout)}
    assert rows["terminal/harbor/off"] is None
    assert "needs network" in rows["terminal/harbor/net"]["reason"]
    done = subprocess.run([envhub, "validate", "terminal/harbor/net", "--no-write", "--json"], env=env,
                          capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout)
    assert report["tasks"] == [] and [u["task"] for u in report["unavailable"]] == ["terminal/harbor/net"], report
    assert "offline" in report["unavailable"][0]["reason"]
    assert not (root / "terminal" / "harbor" / "net" / "validation.json").exists()
