"""Import a Harbor / Terminal-Bench task folder as an envhub `terminal` task.

Two source layouts are read:

- **Harbor** (Terminal-Bench 2): `instruction.md`, `task.toml`, `environment/Dockerfile` + build
  context, `solution/solve.sh`, `tests/test.sh` writing `/logs/verifier/reward.txt`;
- **Terminal-Bench 1**: `task.yaml` (instruction, limits), a `Dockerfile` at the top with the
  folder as its build context, `solution.sh` (or `solution.yaml`), `run-tests.sh` (optional: Terminal-Bench's default
  stands in) and `tests/`; it passes when `run-tests.sh` exits 0 (Terminal-Bench's pytest parser: every test passed).

Both become:

    <tasks>/terminal/harbor/<name>/
        task.yaml        id, title, difficulty, tags and limits (agent/verifier timeouts, memory);
                         `metadata.harbor` records the base image, the Dockerfile steps not
                         replayed and why, the ENV it sets, the path map
        prompt.md        the instruction, with the container's work dir (`/app`) read as `/workspace`
        state/           the work dir as the image build leaves it: the Dockerfile's WORKDIR, COPY,
                         ENV and RUN steps replayed offline in a sandbox (environments/terminal/dockerfile.py)
        solution/solve.sh  the oracle, self-contained: other solution files are inlined into /tmp
        tests/.harbor/   the original tests (test.sh, test_*.py, data), paths remapped; a dot folder,
                         so envhub's pytest never collects them directly
        tests/test_harbor.py  generated (environments/terminal/harbor_wrapper.py): runs test.sh over a
                         scratch copy of the final state and turns the reward it writes into the score
        tests/.harbor_initial_state.tar.gz  the starting state, for the wrapper's control run

A multi-step Harbor task (`[[steps]]`, each step's files in `steps/<name>/`) becomes one such task
per step, `<name>-<NN>-<step>`, whose state is the one the earlier steps' `workdir/`, `setup.sh`
and solutions leave (run at import, offline, as Harbor runs them in one container).

Why remap paths rather than mount them: the verifier sandbox has fixed mounts and a private
`/tmp`, so the wrapper lays Harbor's world out under `/tmp/harbor/{app,tests,logs}` and the
importer rewrites the absolute paths `/app` (the work dir), `/tests`, `/logs` and `/solution` in
the files it copies. Package installs and downloads that test scripts do (apt-get, curl | sh,
uvx pytest) are answered by offline shims that run the verifier's own pytest.

**A task folder is untrusted input** (issue 40). Every file is read only when it resolves inside
the task folder; a link is copied as a link only when it resolves inside what it is copied into,
never dereferenced; every write goes through `dockerfile.Confined` (each existing component
resolved and checked inside the output folder, the last opened `O_NOFOLLOW`): that one mechanism,
rather than a list of known attacks, is what keeps a write from leaving. Every value of
`task.toml` (or Terminal-Bench's `task.yaml`) is checked: a malformed one is a `TaskFormatError`,
one line naming the field. Every field is honoured, makes the task unavailable here (it needs the
network, a GPU: `metadata.requires`), refuses it, or is a warning line kept in
`metadata.harbor.unsupported_setup`: the tables `HONOURED`, `UNAVAILABLE`, `REFUSED` and
`NOT_HONOURED` below say which, and README's "Harbor and Terminal-Bench tasks" shows them.
A task that exists is replaced only with `overwrite` (`--force`), and only once the new one has
imported and loads: a failed re-import loses nothing.
"""

from __future__ import annotations

import base64
import dataclasses
import math
import os
import re
import shlex
import shutil
import tarfile
import tomllib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from envhub.errors import TaskFormatError
from envhub.sandbox.base import SandboxLimits
from envhub.tasks.model import Task, short_title
from environments.terminal.dockerfile import (
    DOCKER_FILES,
    Confined,
    DockerPlan,
    Refused,
    Replay,
    StateRunner,
    inside,
    open_confined,
    parse_dockerfile,
    read_tree,
    remap,
    replay,
    replay_docker,
    scrub,
)
from environments.terminal.harbor_wrapper import WRAPPER

__all__ = ["import_harbor", "parse_dockerfile", "detect_layout", "field_table", "HONOURED", "UNAVAILABLE", "REFUSED",
           "NOT_HONOURED"]

#: Where the generated wrapper lays out Harbor's filesystem inside the verifier sandbox.
VERIFY_ROOT = "/tmp/harbor"
AGENT_WORKSPACE = "/workspace"
AGENT_SOLUTION = "/tmp/solution"
MAX_REWRITE_BYTES = 1024 * 1024
MAX_TEXT_BYTES = 16 * 1024 * 1024  # instruction.md, task.toml, the Dockerfile, solve.sh
MAX_NAME_CHARS = 128
#: Terminal-Bench 1 files that are the task's hidden parts or its harness, never its state.
TB_HIDDEN = {"task.yaml", "solution.sh", "solution.yaml", "run-tests.sh", "tests", "docker-compose.yaml",
             "docker-compose.yml"}
#: Terminal-Bench 1's own default, used when a task ships no run-tests.sh (Terminal-Bench's task
#: guide: "run-tests.sh (optional if using pytest without dependencies)"): pytest over
#: tests/test_outputs.py; its uv and curl steps are answered by the offline shims like any task's.
TB_DEFAULT_RUN_TESTS = """#!/bin/bash
# Generated by envhub's importer: the task ships no run-tests.sh, so this is Terminal-Bench 1's default.
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh
source $HOME/.local/bin/env
uv venv .tbench-testing
source .tbench-testing/bin/activate
uv pip install pytest==8.4.1
uv run pytest $TEST_DIR/test_outputs.py -rA
"""
TB_TEST_SH = """#!/bin/bash
# Generated by envhub's importer: Terminal-Bench 1 grades with its pytest parser (every test
# passed); run-tests.sh exits with pytest's status, so its exit status is the reward.
mkdir -p /logs/verifier
bash /tests/run-tests.sh
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""
# -- how each field is treated ----------------------------------------------------------------------
#: Harbor's task.toml (schema 1.0 to 1.4, Harbor's `TaskConfig`) and Terminal-Bench 1's task.yaml,
#: field by field. These tables are the one source: `_check_config` acts on them, README's table
#: ("Harbor and Terminal-Bench tasks") is `field_table()`, and tests/terminal/test_harbor_fields.py
#: fails when a field of Harbor's schema is in none of them or the README differs. A dotted name
#: covers the table below it (`verifier.environment` is the whole table); `steps[].x` is field `x`
#: of every `[[steps]]` entry. A field set to a value in `HARMLESS` asks nothing envhub lacks.
HONOURED: dict[str, str] = {
    "schema_version": "read; kept in `metadata.harbor.schema_version`",
    "version": "the older name of `schema_version`",
    "source": "kept in `metadata.harbor.upstream_source`",
    "task.name": "the id (slug, at most 128 characters)",
    "task.description": "the title",
    "task.version": "kept in `metadata.harbor.task_version`",
    "task.keywords": "tags",
    "task.authors": "kept in `metadata.harbor.authors`",
    "metadata": "kept in `metadata.harbor.task_metadata`; `difficulty`, `category`, `tags` mapped",
    "agent.timeout_sec": "the episode's limit",
    "verifier.timeout_sec": "test.sh's limit (the verifier's, plus 30 s to lay out the state)",
    "verifier.env": "test.sh's environment",
    "solution.env": "exported at the top of solve.sh",
    "environment.build_timeout_sec": "the limit of each replayed `RUN` step",
    "environment.cpus": "the agent's sandbox (`limits.cpus`) and test.sh, pinned to that many CPUs",
    "environment.memory_mb": "the sandboxes' memory",
    "environment.memory": "the older `\"2G\"` form of `memory_mb`",
    "environment.env": "set for the agent (the prompt says it), the oracle and test.sh; `${VAR:-default}` takes "
                       "the default; a bare `${VAR}` (Harbor reads it from its host) is left out, with a warning",
    "environment.workdir": "the work dir that becomes the workspace, over the Dockerfile's `WORKDIR`",
    "steps": "one task per step (`<name>-<NN>-<step>`), starting from the state the earlier steps' "
             "`workdir/`, `setup.sh` and solutions leave (replayed offline at import, as Harbor runs them in "
             "one container), with the step's instruction, tests (over the task's `tests/`) and solution",
    "steps[].name": "the step's folder `steps/<name>/` and the end of its task's id",
    "steps[].agent.timeout_sec": "the step's episode limit, over `agent.timeout_sec`",
    "steps[].verifier.timeout_sec": "the step's test.sh limit, over `verifier.timeout_sec`",
    "steps[].verifier.env": "the step's test.sh environment, over `verifier.env`",
}
#: Fields that make a task need what no envhub sandbox gives: the task is imported, but listed as
#: `unavailable` (`metadata.requires`, read by `Family.availability`), never run or validated.
#: field -> (what it needs, when).
UNAVAILABLE: dict[str, tuple[str, str]] = {
    "environment.allow_internet": ("network", "`true`, unless both the agent and the verifier phase set "
                                   "`network_mode = \"no-network\"`; `false` honoured (offline)"),
    "environment.network_mode": ("network", "`public` or `allowlist`, unless both phases set `no-network`; "
                                 "`no-network` honoured"),
    "environment.allowed_hosts": ("network", "any host (an allowlist)"),
    "agent.network_mode": ("network", "`public` or `allowlist` for the agent; `no-network` honoured"),
    "agent.allowed_hosts": ("network", "any host the agent reaches"),
    "verifier.network_mode": ("network", "`public` or `allowlist` for the tests; `no-network` honoured"),
    "verifier.allowed_hosts": ("network", "any host the tests reach"),
    "steps[].agent.network_mode": ("network", "`public` or `allowlist`: that step's task; `no-network` honoured"),
    "steps[].agent.allowed_hosts": ("network", "any host: that step's task"),
    "steps[].verifier.network_mode": ("network", "`public` or `allowlist`: that step's task; `no-network` honoured"),
    "steps[].verifier.allowed_hosts": ("network", "any host: that step's task"),
    "environment.gpus": ("gpu", "above 0"),
    "environment.gpu_types": ("gpu", "any GPU type"),
    "environment.tpu": ("tpu", "any TPU slice"),
}
#: Fields whose value makes the import wrong, whatever envhub does: the task is not imported
#: (one line naming the field). field -> why.
REFUSED: dict[str, str] = {
    "environment.os": "`windows`: envhub's sandboxes run Linux (`linux` honoured)",
    "verifier.environment_mode": "`separate`: the tests would run in a container of their own that sees only "
                                 "the artifacts; envhub's tests read the agent's final files (`shared` honoured)",
    "verifier.environment": "a separate verifier environment (an image of its own) is not built",
    "verifier.collect": "commands run in the task's services after the agent are not run (no service is "
                        "started), so the tests would judge other files",
    "steps[].verifier.environment_mode": "`separate`, as `verifier.environment_mode`",
    "steps[].verifier.environment": "as `verifier.environment`",
    "steps[].verifier.collect": "as `verifier.collect`",
}
#: Fields read but not honoured: a warning, kept in `metadata.harbor.unsupported_setup`. field -> why.
NOT_HONOURED: dict[str, str] = {
    "environment.storage_mb": "the sandbox bounds each file's size, not the disk",
    "environment.storage": "the sandbox bounds each file's size, not the disk",
    "environment.docker_image": "no image is pulled: the state comes from environment/Dockerfile (a task "
                                "with no Dockerfile is refused)",
    "environment.mcp_servers": "the task's MCP servers are neither started nor offered to the agent",
    "environment.skills_dir": "skills are not delivered to the agent",
    "environment.healthcheck": "no service is started before the agent, so nothing is checked",
    "agent.user": "the agent runs as the sandbox's unprivileged user",
    "verifier.user": "test.sh runs as the sandbox's unprivileged user",
    "artifacts": "nothing is collected after an episode; the verdict is test.sh's reward",
    "multi_step_reward_strategy": "no roll-up: each step is a task of its own, scored alone",
    "steps[].min_reward": "no early stop: each step is a task of its own, starting from the earlier steps' "
                          "solutions",
    "steps[].agent.user": "as `agent.user`",
    "steps[].verifier.user": "as `verifier.user`",
    "steps[].healthcheck": "as `environment.healthcheck`",
    "steps[].artifacts": "as `artifacts`",
}
#: Values that ask for nothing envhub lacks: no warning, no requirement, no refusal.
HARMLESS: dict[str, tuple[Any, ...]] = {
    "environment.allow_internet": (False,),
    "environment.network_mode": ("no-network",),
    "agent.network_mode": ("no-network",),
    "verifier.network_mode": ("no-network",),
    "environment.allowed_hosts": ([],),
    "agent.allowed_hosts": ([],),
    "verifier.allowed_hosts": ([],),
    "environment.gpus": (0,),
    "environment.gpu_types": ([],),
    "environment.os": ("linux",),
    "verifier.environment_mode": ("shared",),
    "verifier.collect": ([],),
    "environment.mcp_servers": ([],),
    "artifacts": ([],),
    "steps[].agent.network_mode": ("no-network",),
    "steps[].verifier.network_mode": ("no-network",),
    "steps[].agent.allowed_hosts": ([],),
    "steps[].verifier.allowed_hosts": ([],),
    "steps[].verifier.environment_mode": ("shared",),
    "steps[].verifier.collect": ([],),
    "steps[].artifacts": ([],),
}
NETWORK_MODES = ("public", "no-network", "allowlist")
#: Terminal-Bench 1's task.yaml keys (its `Task` model): honoured (key -> what), or not (key -> why).
TB_HONOURED: dict[str, str] = {
    "instruction": "the prompt",
    "descriptions": "the prompt, in the oldest tasks (the first description)",
    "difficulty": "the difficulty",
    "category": "a tag",
    "tags": "tags",
    "author_name": "kept in `metadata.harbor.task_metadata`",
    "author_email": "kept in `metadata.harbor.task_metadata`",
    "max_agent_timeout_sec": "the episode's limit",
    "max_test_timeout_sec": "test.sh's limit",
    "estimated_duration_sec": "kept in `metadata.harbor.task_metadata`",
    "expert_time_estimate_min": "kept in `metadata.harbor.task_metadata`",
    "junior_time_estimate_min": "kept in `metadata.harbor.task_metadata`",
    "disable_asciinema": "kept in `metadata.harbor.task_metadata` (envhub records no terminal)",
}
TB_NOT_HONOURED: dict[str, str] = {
    "parser_name": "other than `pytest`: run-tests.sh passes when it exits 0, as with the pytest parser",
    "run_tests_in_same_shell": "`true`: the tests run in a fresh sandbox over the final files, not in the "
                               "agent's shell",
}
#: The task.yaml keys kept as they are in `metadata.harbor.task_metadata`.
TB_INFORMATIONAL = {"estimated_duration_sec", "expert_time_estimate_min", "junior_time_estimate_min",
                    "disable_asciinema"}


def field_table() -> str:
    """README's table of every field, generated from the tables above."""
    rows = ["| field | treatment | what the importer does, or why not |", "|---|---|---|"]
    rows += [f"| `{name}` | honoured | {what} |" for name, what in HONOURED.items()]
    rows += [f"| `{name}` | task unavailable here (needs {need}) | {when} |"
             for name, (need, when) in UNAVAILABLE.items()]
    rows += [f"| `{name}` | refused (not imported) | {why} |" for name, why in REFUSED.items()]
    rows += [f"| `{name}` | ignored, with a warning | {why} |" for name, why in NOT_HONOURED.items()]
    rows += ["| any other field or table | ignored, with a warning | unknown to the importer |",
             "| a malformed value of any field (`inf`, a list for a number, a 5,000-character name) | refused "
             "(not imported) | one line naming the field |"]
    rows += [f"| Terminal-Bench `{key}` | honoured | {what} |" for key, what in TB_HONOURED.items()]
    rows += [f"| Terminal-Bench `{key}` | ignored, with a warning | {why} |" for key, why in TB_NOT_HONOURED.items()]
    rows.append("| any other Terminal-Bench key | ignored, with a warning | unknown to the importer |")
    return "\n".join(rows) + "\n"


ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Source:
    """A task folder in either layout, read into the same shape."""

    root: Path
    layout: str  # "harbor" or "terminal-bench"
    instruction: str
    config: dict[str, Any]  # task.toml's tables (Terminal-Bench's task.yaml mapped onto them)
    context: Path | None  # the Docker build context
    dockerfile: Path | None
    tests: Path
    solution: str | None  # the oracle script's text
    solution_extras: Path | None = None  # Harbor's solution/ folder: its other files are read from /solution
    context_exclude: set[str] = field(default_factory=set)
    extra_test_files: dict[str, str | Path] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # fields not honoured
    requires: dict[str, str] = field(default_factory=dict)  # what no sandbox gives -> the fields that ask for it
    steps: list[StepSource] = field(default_factory=list)  # a multi-step task's `[[steps]]`, in order
    tests_over: Path | None = None  # a step's tests/, laid over the task's
    step: dict[str, Any] | None = None  # a step's task: `metadata.harbor.multi_step`


@dataclass
class StepSource:
    """One `[[steps]]` entry and its folder `steps/<name>/`."""

    index: int
    name: str
    instruction: str
    tests: Path | None  # steps/<name>/tests/
    solution: str | None  # steps/<name>/solution/solve.sh
    solution_extras: Path | None
    workdir: Path | None  # steps/<name>/workdir/: laid into the work dir before the step
    setup: str | None  # steps/<name>/workdir/setup.sh: run in the work dir before the step, not left there
    config: dict[str, Any]  # the `[[steps]]` table


def detect_layout(src: Path) -> str:
    """`harbor` or `terminal-bench`; a clear error naming what is missing otherwise."""
    if (src / "task.toml").is_file() or (src / "instruction.md").is_file():
        # a multi-step task keeps its instructions and tests in steps/<name>/ (task.toml says which)
        for required in ("task.toml",) if (src / "steps").is_dir() else ("instruction.md", "task.toml",
                                                                          "tests/test.sh"):
            if not (src / required).is_file():
                raise TaskFormatError(f"{src / required}: missing (not a Harbor task folder)", file=str(src / required))
        return "harbor"
    if (src / "task.yaml").is_file():
        for required in ("tests",):  # run-tests.sh is optional: Terminal-Bench's default stands in
            if not (src / required).exists():
                raise TaskFormatError(f"{src / required}: missing (not a Terminal-Bench task folder)",
                                      file=str(src / required))
        return "terminal-bench"
    raise TaskFormatError(f"{src}: neither a Harbor task (instruction.md, task.toml) nor a Terminal-Bench task "
                          "(task.yaml, tests/)", file=str(src))


def _inside(src: Path, rel: str) -> Path:
    """`src/rel`, refused when it (a link, or a link on its way) resolves outside the task folder."""
    path = src / rel
    if os.path.lexists(path) and not inside(path, src):
        raise TaskFormatError(f"{path}: a link that leaves the task folder", file=str(path))
    return path


def _text(src: Path, rel: str) -> str:
    """A text file of the task, read only inside the task folder, as UTF-8."""
    path = _inside(src, rel)
    try:
        with open_confined(src, path) as f:
            data = f.read(MAX_TEXT_BYTES + 1)
    except Refused as e:
        raise TaskFormatError(str(e), file=str(path)) from None
    if len(data) > MAX_TEXT_BYTES:
        raise TaskFormatError(f"{path}: larger than {MAX_TEXT_BYTES // (1024 * 1024)} MiB", file=str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TaskFormatError(f"{path}: not UTF-8 text (byte {e.start})", file=str(path)) from None


def _read_source(src: Path) -> Source:
    layout = detect_layout(src)
    if layout == "harbor":
        toml_text = _text(src, "task.toml")
        try:
            config = tomllib.loads(toml_text)
        except tomllib.TOMLDecodeError as e:
            raise TaskFormatError(f"{src / 'task.toml'}: not valid TOML: {e}", file=str(src / "task.toml")) from e
        warnings, requires = _check_config(config, src / "task.toml")
        if "steps" in config:
            return _read_multi_step(src, config, warnings, requires)
        for required in ("instruction.md", "tests/test.sh"):
            if not (src / required).is_file():
                raise TaskFormatError(f"{src / required}: missing (not a Harbor task folder)", file=str(src / required))
        env_dir = _inside(src, "environment")
        _inside(src, "tests")
        _inside(src, "solution")
        has_solve = _inside(src, "solution/solve.sh").is_file()
        dockerfile = _inside(src, "environment/Dockerfile")
        if "docker_image" in _table(config, "environment") and not dockerfile.is_file():
            raise TaskFormatError(f"{src / 'task.toml'}: environment.docker_image = "
                                  f"{_shown(config['environment']['docker_image'])}: not imported (a prebuilt image "
                                  "and no environment/Dockerfile: its files cannot be known offline)",
                                  file=str(src / "task.toml"), field="environment.docker_image")
        source = Source(src, layout, _text(src, "instruction.md"), config, env_dir if env_dir.is_dir() else None,
                        dockerfile if dockerfile.is_file() else None, src / "tests",
                        _text(src, "solution/solve.sh") if has_solve else None,
                        src / "solution" if has_solve else None)
        source.warnings, source.requires = warnings, requires
        return source
    try:
        raw = yaml.safe_load(_text(src, "task.yaml")) or {}
    except yaml.YAMLError as e:
        raise TaskFormatError(f"{src / 'task.yaml'}: not valid YAML: {' '.join(str(e).split())}",
                              file=str(src / "task.yaml")) from e
    if not isinstance(raw, dict):
        raise TaskFormatError(f"{src / 'task.yaml'}: must be a mapping", file=str(src / "task.yaml"))
    instruction = raw.get("instruction")
    if not instruction and isinstance(raw.get("descriptions"), list):  # the oldest Terminal-Bench tasks
        instruction = next((d.get("description") for d in raw["descriptions"] if isinstance(d, dict)), None)
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskFormatError(f"{src / 'task.yaml'}: field 'instruction': missing", file=str(src / "task.yaml"),
                              field="instruction")
    where = src / "task.yaml"
    config = {"task": {"name": src.name},
              "metadata": {k: raw[k] for k in ("difficulty", "category", "tags", "author_email", "author_name",
                                               *TB_INFORMATIONAL) if k in raw},
              "agent": {"timeout_sec": _number(raw, "max_agent_timeout_sec", where, "max_agent_timeout_sec", 360)},
              "verifier": {"timeout_sec": _number(raw, "max_test_timeout_sec", where, "max_test_timeout_sec", 60)}}
    _check_config(config, where)
    warnings = [f"task.yaml {k}: not honoured (unknown to the importer)" for k in raw
                if k not in TB_HONOURED and k not in TB_NOT_HONOURED]
    if raw.get("parser_name", "pytest") != "pytest":
        warnings.append(f"task.yaml parser_name = {_shown(raw['parser_name'])}: not honoured "
                        f"({TB_NOT_HONOURED['parser_name'].partition(': ')[2]})")
    if raw.get("run_tests_in_same_shell"):
        warnings.append("task.yaml run_tests_in_same_shell: not honoured "
                        f"({TB_NOT_HONOURED['run_tests_in_same_shell'].partition(': ')[2]})")
    for rel in ("tests", "run-tests.sh", "solution.sh", "solution.yaml", "Dockerfile"):
        _inside(src, rel)
    solution = (_text(src, "solution.sh") if (src / "solution.sh").is_file()
                else _solution_from_yaml(src, "solution.yaml") if (src / "solution.yaml").is_file() else None)
    source = Source(src, layout, instruction, config, src,
                    src / "Dockerfile" if (src / "Dockerfile").is_file() else None,
                    src / "tests", solution, context_exclude=set(TB_HIDDEN),
                    extra_test_files={"run-tests.sh": src / "run-tests.sh" if (src / "run-tests.sh").is_file()
                                      else TB_DEFAULT_RUN_TESTS, "test.sh": TB_TEST_SH})
    if not (src / "run-tests.sh").is_file():
        warnings.append("no run-tests.sh: Terminal-Bench 1's default stands in (pytest over tests/test_outputs.py)")
    source.warnings = warnings
    return source


def _read_multi_step(src: Path, config: dict[str, Any], warnings: list[str], requires: dict[str, str]) -> Source:
    """A task with `[[steps]]`: the environment and the shared `tests/` at the top, each step's
    instruction, tests, solution and `workdir/` in `steps/<name>/` (Harbor's layout)."""
    where = src / "task.toml"
    _inside(src, "steps")
    steps = []
    for i, entry in enumerate(config["steps"]):
        rel = f"steps/{entry['name']}"
        folder = _inside(src, rel)
        if not folder.is_dir():
            raise TaskFormatError(f"{where}: steps[{i}].name = {_shown(entry['name'])}: no folder {rel}/ "
                                  "(a multi-step task keeps each step's files in steps/<name>/)", file=str(where),
                                  field=f"steps[{i}].name")
        if not _inside(src, f"{rel}/instruction.md").is_file():
            raise TaskFormatError(f"{folder / 'instruction.md'}: missing (each step has its own instruction)",
                                  file=str(folder / "instruction.md"))
        tests, solution, workdir = (_inside(src, f"{rel}/{sub}") for sub in ("tests", "solution", "workdir"))
        if not (_inside(src, f"{rel}/tests/test.sh").is_file() or _inside(src, "tests/test.sh").is_file()):
            raise TaskFormatError(f"{folder / 'tests/test.sh'}: missing, and no tests/test.sh for every step",
                                  file=str(folder / "tests" / "test.sh"))
        has_solve = _inside(src, f"{rel}/solution/solve.sh").is_file()
        has_setup = _inside(src, f"{rel}/workdir/setup.sh").is_file()
        steps.append(StepSource(i, entry["name"], _text(src, f"{rel}/instruction.md"),
                                tests if tests.is_dir() else None,
                                _text(src, f"{rel}/solution/solve.sh") if has_solve else None,
                                solution if has_solve else None, workdir if workdir.is_dir() else None,
                                _text(src, f"{rel}/workdir/setup.sh") if has_setup else None, entry))
    env_dir, dockerfile = _inside(src, "environment"), _inside(src, "environment/Dockerfile")
    if "docker_image" in _table(config, "environment") and not dockerfile.is_file():
        raise TaskFormatError(f"{where}: environment.docker_image = {_shown(config['environment']['docker_image'])}: "
                              "not imported (a prebuilt image and no environment/Dockerfile: its files cannot be "
                              "known offline)", file=str(where), field="environment.docker_image")
    _inside(src, "tests")
    source = Source(src, "harbor", "", config, env_dir if env_dir.is_dir() else None,
                    dockerfile if dockerfile.is_file() else None, src / "tests", None)
    source.warnings, source.requires, source.steps = warnings, requires, steps
    return source


def _step_source(source: Source, step: StepSource) -> Source:
    """The task of one step: the step's instruction, tests (over the task's), solution and limits
    (its `agent` / `verifier` over the task's), its own network needs."""
    cfg = dict(source.config)
    for phase in ("agent", "verifier"):
        cfg[phase] = {**_table(cfg, phase), **_table(step.config, phase)}
    cfg["verifier"]["env"] = {**_table(_table(source.config, "verifier"), "env"),
                              **_table(_table(step.config, "verifier"), "env")}
    requires = {k: v for k, v in source.requires.items() if k != "network"}
    if network := _network_needs(source.config, step.config, f"steps[{step.index}]"):
        requires["network"] = "; ".join(network)
    n = len(source.steps)
    warnings = [w for w in source.warnings if not w.startswith("steps[") or w.startswith(f"steps[{step.index}].")]
    return dataclasses.replace(
        source, instruction=step.instruction, config=cfg, requires=requires, steps=[], warnings=warnings,
        tests_over=step.tests, solution=step.solution, solution_extras=step.solution_extras,
        step={"parent": str(_table(source.config, "task").get("name") or source.root.name), "step": step.name,
              "index": step.index + 1, "of": n, "steps": [s.name for s in source.steps],
              "reward_strategy": str(source.config.get("multi_step_reward_strategy", "mean")),
              **({"min_reward": _plain(step.config["min_reward"])} if "min_reward" in step.config else {}),
              "state": "the image's, then " + (", then ".join(
                  f"step {s.name}'s workdir/, setup.sh and solution" for s in source.steps[:step.index])
                  + ", then " if step.index else "") + "this step's workdir/ and setup.sh"})


def _solution_from_yaml(src: Path, rel: str) -> str:
    """Terminal-Bench's `solution.yaml` (a list of terminal commands) as one script."""
    path = src / rel
    try:
        steps = yaml.safe_load(_text(src, rel)) or []
    except yaml.YAMLError as e:
        raise TaskFormatError(f"{path}: not valid YAML: {' '.join(str(e).split())}", file=str(path)) from e
    if not isinstance(steps, list):
        raise TaskFormatError(f"{path}: must be a list of commands", file=str(path))
    lines = ["#!/bin/bash"] + [str(s["command"]).rstrip("\n") for s in steps if isinstance(s, dict) and "command" in s]
    return "\n".join(lines) + "\n"


# -- task.toml's values --------------------------------------------------------------------------------
def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _bad(where: Path, name: str, value: Any, why: str) -> TaskFormatError:
    return TaskFormatError(f"{where}: {name} = {_shown(value)}: {why}", file=str(where), field=name)


def _number(table: dict[str, Any], key: str, where: Path, name: str, default: float, *,
            allow_zero: bool = False) -> float:
    """A positive, finite number (no bool, no string) below 10^9, or `default` when absent."""
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad(where, name, value, "must be a number")
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero) or value > 1e9:
        raise _bad(where, name, value, "must be a finite number above 0 and below 10^9")
    return float(value)


def _table(cfg: dict[str, Any], name: str) -> dict[str, Any]:
    value = cfg.get(name)
    return value if isinstance(value, dict) else {}


def _memory_mb(environment: dict[str, Any], where: Path, default: int = 2048) -> int:
    """`memory_mb = 4096` or Harbor's newer `memory = "4G"` / `"512M"`."""
    if "memory_mb" in environment:
        return int(_number(environment, "memory_mb", where, "environment.memory_mb", default))
    if "memory" not in environment:
        return default
    value = environment["memory"]
    m = re.fullmatch(r"\s*(\d{1,12}(?:\.\d{1,6})?)\s*([kmgt]?)i?b?\s*", value if isinstance(value, str) else "", re.I)
    if not m:
        raise _bad(where, "environment.memory", value, 'must be a size such as "2G" or "512M"')
    scale = {"": 1 / (1024 * 1024), "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}[m.group(2).lower()]
    mb = float(m.group(1)) * scale
    if mb < 1:
        raise _bad(where, "environment.memory", value, "must be at least 1M")
    return int(mb)


def _env_table(table: dict[str, Any], key: str, where: Path, name: str) -> dict[str, str]:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise _bad(where, name, value, "must be a table of NAME = value")
    out = {}
    for k, v in value.items():
        if not ENV_NAME.fullmatch(k):
            raise _bad(where, f"{name}.{k}", v, "not a variable name")
        if isinstance(v, bool) or not isinstance(v, str | int | float) or "\0" in str(v):
            raise _bad(where, f"{name}.{k}", v, "must be a string or a number")
        out[k] = str(v)
    return out


def _strings(table: dict[str, Any], key: str, where: Path, name: str) -> None:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(t, str) and len(t) <= 200 for t in value):
        raise _bad(where, name, value, "must be a list of strings")


def _choice(table: dict[str, Any], key: str, where: Path, name: str, choices: tuple[str, ...]) -> None:
    if key in table and (not isinstance(table[key], str) or table[key].lower() not in choices):
        raise _bad(where, name, table[key], "must be one of " + ", ".join(choices))


def _check_values(cfg: dict[str, Any], where: Path) -> None:
    """Refuse a malformed value: a TaskFormatError naming the field."""
    for name in ("task", "metadata", "agent", "verifier", "environment", "solution"):
        if name in cfg and not isinstance(cfg[name], dict):
            raise _bad(where, name, cfg[name], "must be a table")
    task, meta = _table(cfg, "task"), _table(cfg, "metadata")
    if "name" in task:
        name = task["name"]
        if not isinstance(name, str) or not name.strip():
            raise _bad(where, "task.name", name, "must be a non-empty string")
        if len(name) > MAX_NAME_CHARS:
            raise _bad(where, "task.name", name, f"{len(name)} characters, at most {MAX_NAME_CHARS}")
    for key in ("description", "version"):
        if key in task and not isinstance(task[key], str):
            raise _bad(where, f"task.{key}", task[key], "must be a string")
    _strings(task, "keywords", where, "task.keywords")
    for key in ("difficulty", "category"):
        if key in meta and not isinstance(meta[key], str):
            raise _bad(where, f"metadata.{key}", meta[key], "must be a string")
    _strings(meta, "tags", where, "metadata.tags")
    agent, verifier, environment = _table(cfg, "agent"), _table(cfg, "verifier"), _table(cfg, "environment")
    _number(agent, "timeout_sec", where, "agent.timeout_sec", 1800)
    _number(verifier, "timeout_sec", where, "verifier.timeout_sec", 600)
    _number(environment, "build_timeout_sec", where, "environment.build_timeout_sec", 600)
    _number(environment, "cpus", where, "environment.cpus", 1)
    _memory_mb(environment, where)
    _env_table(verifier, "env", where, "verifier.env")
    _env_table(_table(cfg, "solution"), "env", where, "solution.env")
    _env_table(environment, "env", where, "environment.env")
    if not isinstance(environment.get("allow_internet", False), bool):
        raise _bad(where, "environment.allow_internet", environment["allow_internet"], "must be true or false")
    for table, label in ((environment, "environment"), (agent, "agent"), (verifier, "verifier")):
        _choice(table, "network_mode", where, f"{label}.network_mode", NETWORK_MODES)
        _strings(table, "allowed_hosts", where, f"{label}.allowed_hosts")
    _check_steps(cfg, where)
    for key in ("gpus", "storage_mb"):
        if key in environment:
            _number(environment, key, where, f"environment.{key}", 0, allow_zero=True)
    _strings(environment, "gpu_types", where, "environment.gpu_types")
    _choice(environment, "os", where, "environment.os", ("linux", "windows"))
    _choice(verifier, "environment_mode", where, "verifier.environment_mode", ("shared", "separate"))
    if "workdir" in environment:
        wd = environment["workdir"]
        if (not isinstance(wd, str) or not wd.startswith("/") or ".." in PurePosixPath(wd).parts or "\0" in wd
                or len(wd) > 4096):
            raise _bad(where, "environment.workdir", wd, "must be an absolute path without '..'")


#: At most this many `[[steps]]` (each is a task, each replays the earlier steps' solutions).
MAX_STEPS = 50
STEP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def _check_steps(cfg: dict[str, Any], where: Path) -> None:
    """`[[steps]]`: a list of 1 to MAX_STEPS tables, each named (a folder name, unique), with
    `agent` / `verifier` tables read like the task's own."""
    if "steps" not in cfg:
        return
    steps = cfg["steps"]
    if (not isinstance(steps, list) or not steps or len(steps) > MAX_STEPS
            or not all(isinstance(e, dict) for e in steps)):
        raise _bad(where, "steps", steps, f"must be 1 to {MAX_STEPS} [[steps]] tables")
    seen: set[str] = set()
    for i, entry in enumerate(steps):
        at = f"steps[{i}]"
        name = entry.get("name")
        if not isinstance(name, str) or not STEP_NAME.fullmatch(name) or name in seen:
            raise _bad(where, f"{at}.name", name, "must be a unique folder name (letters, digits, . _ -)")
        seen.add(name)
        for phase in ("agent", "verifier"):
            table = entry.get(phase, {})
            if not isinstance(table, dict):
                raise _bad(where, f"{at}.{phase}", table, "must be a table")
            if "timeout_sec" in table:
                _number(table, "timeout_sec", where, f"{at}.{phase}.timeout_sec", 1)
            _choice(table, "network_mode", where, f"{at}.{phase}.network_mode", NETWORK_MODES)
            _strings(table, "allowed_hosts", where, f"{at}.{phase}.allowed_hosts")
        _env_table(entry.get("verifier", {}), "env", where, f"{at}.verifier.env")


def _step_fields(steps: list[dict[str, Any]]) -> list[tuple[str, Any, str]]:
    """Every field set in `[[steps]]`: its name in the tables (`steps[].agent.x`), its value, and
    the name a line shows (`steps[1].agent.x`: the step's task keeps only its own)."""
    out = []
    for i, entry in enumerate(steps):
        for key, value in entry.items():
            if key in ("agent", "verifier") and isinstance(value, dict):
                out += [(f"steps[].{key}.{k}", v, f"steps[{i}].{key}.{k}") for k, v in value.items()]
            else:
                out.append((f"steps[].{key}", value, f"steps[{i}].{key}"))
    return out


def _network_needs(cfg: dict[str, Any], step: dict[str, Any] | None = None, at: str = "steps[]") -> list[str]:
    """Which phases need the network, and the field that says so (Harbor's resolution: a phase's
    own `network_mode` (a step's over the task's), else the environment's `network_mode` /
    `allowed_hosts`, else `allow_internet`). A task that says nothing asks for nothing: Harbor's
    permissive default is not a need."""
    environment = _table(cfg, "environment")
    needs = []
    for phase in ("agent", "verifier"):
        layers = [(_table(step, phase), f"{at}.{phase}")] if step else []
        for table, label in (*layers, (_table(cfg, phase), phase), (environment, "environment")):
            if "network_mode" in table or table.get("allowed_hosts"):
                mode = str(table.get("network_mode", "allowlist")).lower()
                said = f"{label}.network_mode = {mode}" if "network_mode" in table else f"{label}.allowed_hosts"
                break
        else:
            if "allow_internet" not in environment:
                continue
            mode = "public" if environment["allow_internet"] else "no-network"
            said = "environment.allow_internet = true"
        if mode != "no-network":
            needs.append(f"the {'agent' if phase == 'agent' else 'tests'}: {said}")
    return needs


def _harmless(name: str, value: Any) -> bool:
    return any(value == h or (isinstance(value, str) and value.lower() == h) for h in HARMLESS.get(name, ()))


def _check_config(cfg: dict[str, Any], where: Path) -> tuple[list[str], dict[str, str]]:
    """Refuse a malformed value, or a field in REFUSED (a TaskFormatError naming the field);
    return a warning for each field set that is not honoured, and what the task needs that no
    envhub sandbox gives (`metadata.requires`: what -> the fields that say so)."""
    _check_values(cfg, where)
    warnings: list[str] = []
    needs: dict[str, list[str]] = {}
    fields: list[tuple[str, Any, str]] = []
    tables = {n.split(".")[0] for n in (*HONOURED, *UNAVAILABLE, *REFUSED, *NOT_HONOURED) if "." in n}
    for top, value in cfg.items():
        if top == "steps":  # checked by _check_steps: a list of tables
            fields += _step_fields(value)
        elif isinstance(value, dict) and top in tables:
            fields += [(f"{top}.{key}", v, f"{top}.{key}") for key, v in value.items()]
        elif isinstance(value, dict) and top not in HONOURED:
            warnings.append(f"[{top}] in task.toml: not honoured (unknown to the importer)")
        else:
            fields.append((top, value, top))
    for name, value, shown in fields:
        if name in HONOURED or _harmless(name, value):
            continue
        if name in REFUSED:
            raise TaskFormatError(f"{where}: {shown} = {_shown(value)}: not imported ({REFUSED[name]})",
                                  file=str(where), field=shown)
        if name in UNAVAILABLE:
            need = UNAVAILABLE[name][0]
            if need != "network":  # the network is decided per phase, below
                needs.setdefault(need, []).append(f"{shown} = {_shown(value)}")
        elif name in NOT_HONOURED:
            warnings.append(f"{shown} = {_shown(value)}: not honoured ({NOT_HONOURED[name]})")
        else:
            warnings.append(f"{shown} = {_shown(value)} in task.toml: not honoured (unknown to the importer)")
    if network := _network_needs(cfg):
        needs["network"] = network
    environment = _table(cfg, "environment")
    if "cpus" in environment and environment["cpus"] < 1:
        warnings.append(f"environment.cpus = {_shown(environment['cpus'])}: not honoured below 1 (no CPU bound)")
    return warnings, {need: "; ".join(said) for need, said in needs.items()}


# -- writing the task ----------------------------------------------------------------------------------
def _rewrite_tree(root: Path, mapping: dict[str, str]) -> list[str]:
    """Rewrite text files under `root` in place (regular files only, through `Confined`);
    returns the ones changed."""
    changed = []
    out = Confined(root)
    for kind, rel, path in read_tree(root, root):
        if kind != "file" or os.lstat(path).st_size > MAX_REWRITE_BYTES:
            continue
        try:
            with open_confined(root, path) as f:
                data, mode = f.read(), os.fstat(f.fileno()).st_mode
            text = data.decode("utf-8")
        except (Refused, UnicodeDecodeError):
            continue
        new = remap(text, mapping)
        if new != text:
            out.write(rel, new.encode("utf-8"), mode)
            changed.append(rel)
    return sorted(changed)


_remap = remap  # the name the tests and older callers use


def _slug(name: str) -> str:
    s = re.sub(r"[^a-z0-9_.-]+", "-", name.strip().lower().split("/")[-1]).strip("-.")
    return s[:MAX_NAME_CHARS] or "task"


def _plain(value: Any) -> Any:
    """TOML values as JSON/YAML-safe plain data."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return value


def _place(tasks_root: Path, slug: str) -> tuple[Path, str]:
    """Folder and id: under `<root>/terminal/harbor/` for a tasks root, or directly in `dest`
    when `dest` is already inside a `tasks/terminal/...` folder."""
    parts = tasks_root.resolve().parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == "terminal" and parts[i - 1] == "tasks":
            return tasks_root / slug, "/".join(("terminal", *parts[i + 1:], slug))
    return tasks_root / "terminal" / "harbor" / slug, f"terminal/harbor/{slug}"


def _solve_script(script: str, extras_dir: Path | None, src_root: Path, mapping: dict[str, str],
                  env: dict[str, str], note: Callable[[str], None]) -> str:
    """The oracle as one self-contained script: the Dockerfile's ENV and task.toml's
    `[solution] env` first, the solution's other files written to /tmp/solution (read inside the
    task folder only; a link kept as a link when it stays inside solution/)."""
    body = remap(script, mapping)
    lines = [f"export {k}={shlex.quote(remap(v, mapping))}" for k, v in env.items()]
    extras: list[str] = []
    for kind, rel, what in read_tree(extras_dir, src_root, skip_top={"solve.sh"}) if extras_dir else []:
        target = f"{AGENT_SOLUTION}/{rel}"
        if kind == "link":
            where = os.path.normpath(os.path.join(os.path.dirname(rel), what))
            if what.startswith("/") or where == ".." or where.startswith("../"):
                note(f"solution/{rel} -> {what}: a link that leaves solution/, not copied")
                continue
            extras += [f"mkdir -p {shlex.quote(str(PurePosixPath(target).parent))}",
                       f"ln -sf {shlex.quote(what)} {shlex.quote(target)}"]
        elif kind == "file":
            try:
                with open_confined(src_root, what) as f:
                    data, mode = f.read(), os.fstat(f.fileno()).st_mode
            except Refused as e:
                note(f"solution/{rel}: {e}")
                continue
            try:
                data = remap(data.decode("utf-8"), mapping).encode()
            except UnicodeDecodeError:
                pass
            extras.append(f"mkdir -p {shlex.quote(str(PurePosixPath(target).parent))}")
            extras.append(f"echo {base64.b64encode(data).decode()} | base64 -d > {shlex.quote(target)}")
            if mode & 0o111:
                extras.append(f"chmod +x {shlex.quote(target)}")
        elif kind == "other":
            note(f"solution/{rel}: not a file, folder or link, not copied")
    if extras:
        lines += ["# --- added by envhub's Harbor importer: the solution's other files ---",
                  f"mkdir -p {AGENT_SOLUTION}", *extras]
    if not lines:
        return body
    lines.append("# --- original solution ---")
    shebang = ""
    if body.startswith("#!"):
        shebang, _, body = body.partition("\n")
        shebang += "\n"
    return shebang + "\n".join(lines) + "\n" + body


def import_harbor(src: Path, dest_root: Path, *, overwrite: bool = False, replay_steps: bool | str = True,
                  log: Callable[[str], None] | None = None) -> Path:
    """Convert the Harbor or Terminal-Bench task folder `src` into a terminal task below `dest_root`;
    returns the task's folder (a multi-step task's first step: `import_all` returns each).

    `dest_root` is a tasks root (the task goes to `<root>/terminal/harbor/<name>`) or a folder
    inside `tasks/terminal/` (the task goes directly in it). `replay_steps`: True replays the
    Dockerfile's RUN steps in a local bubblewrap sandbox, "docker" builds the image with the Docker
    engine instead, False copies files only. `log` gets one line per Dockerfile step replayed or
    not replayed, and a `warning: ` line per field or file not honoured. A task that exists is a
    TaskFormatError unless `overwrite`; then it is replaced only once the new one loads. Every
    malformed input is a TaskFormatError.
    """
    return import_all(src, dest_root, overwrite=overwrite, replay_steps=replay_steps, log=log)[0]


def import_all(src: Path, dest_root: Path, *, overwrite: bool = False, replay_steps: bool | str = True,
               log: Callable[[str], None] | None = None) -> list[Path]:
    """`import_harbor`, returning every task made: one, or one per step of a multi-step task
    (`<name>-<NN>-<step>`), all or none."""
    src = src.resolve()
    log = log or (lambda _: None)
    source = _read_source(src)
    try:
        plan = parse_dockerfile(_text(src, source.dockerfile.relative_to(src).as_posix())) if source.dockerfile \
            else DockerPlan()
    except ValueError as e:
        raise TaskFormatError(f"{source.dockerfile}: {e}", file=str(source.dockerfile)) from None
    if isinstance(workdir := _table(source.config, "environment").get("workdir"), str):
        plan.workdir = str(PurePosixPath(workdir))  # Harbor's `workdir` overrides the image's WORKDIR
    slug = _slug(str(_table(source.config, "task").get("name") or src.name))
    slugs = [f"{slug[:MAX_NAME_CHARS - 40]}-{s.index + 1:02d}-{_slug(s.name)[:36]}" for s in source.steps] or [slug]
    places = [_place(dest_root, s) for s in slugs]
    for folder, task_id in places:
        if os.path.lexists(folder) and not overwrite:
            raise TaskFormatError(f"{task_id} exists ({folder}); --force replaces it", file=str(folder))
    places[0][0].parent.mkdir(parents=True, exist_ok=True)
    stagings = [folder.parent / f".{folder.name}.importing-{uuid.uuid4().hex[:8]}" for folder, _ in places]
    try:
        for staging in stagings:
            (staging / "state").mkdir(parents=True)
        if not source.steps:
            done = _make_state(source, stagings[0] / "state", plan, replay_steps, log)
            _write_task(source, stagings[0], places[0][1], plan, done, log)
        else:
            base = stagings[0].parent / f"{stagings[0].name}.base"
            try:
                base.mkdir()
                done = _make_state(source, base, plan, replay_steps, log)
                _step_states(source, plan, done, base, [st / "state" for st in stagings], replay_steps, log)
            finally:
                shutil.rmtree(base, ignore_errors=True)
            for step, staging, (_, task_id) in zip(source.steps, stagings, places, strict=True):
                _write_task(_step_source(source, step), staging, task_id, plan, done, log)
    except BaseException:
        for staging in stagings:
            shutil.rmtree(staging, ignore_errors=True)
        raise
    for staging, (folder, _) in zip(stagings, places, strict=True):
        _swap_in(staging, folder)
    return [folder for folder, _ in places]


def _swap_in(staging: Path, folder: Path) -> None:
    """Put the staged task at `folder`; the old one (if any) goes only once the new one loads."""
    old = None
    if os.path.lexists(folder):
        old = folder.parent / f".{folder.name}.replaced-{uuid.uuid4().hex[:8]}"
        os.rename(folder, old)
    os.rename(staging, folder)
    try:
        Task.load(folder)  # the result must load: fail here, not at serve time
    except Exception as e:
        shutil.rmtree(folder, ignore_errors=True)
        if old is not None:
            os.rename(old, folder)
        if isinstance(e, TaskFormatError):
            raise
        raise TaskFormatError(f"{folder}: the imported task does not load: {e}", file=str(folder)) from None
    if old is not None:
        if old.is_symlink() or not old.is_dir():
            old.unlink()
        else:
            shutil.rmtree(old, ignore_errors=True)


def _make_state(source: Source, state: Path, plan: DockerPlan, replay_steps: bool | str,
                log: Callable[[str], None]) -> Replay:
    """`state`: the work dir as the image build leaves it (paths as in the image)."""
    cfg, where = source.config, source.root / ("task.toml" if source.layout == "harbor" else "task.yaml")
    environment = _table(cfg, "environment")
    memory_mb = max(64, min(_memory_mb(environment, where), 65_536))
    if source.dockerfile is None:
        done = Replay(state_from="nothing (no Dockerfile)", notes=["no Dockerfile" + (
            " (docker-compose environments are not replayed)" if source.context and any(
                source.context.glob("docker-compose.y*ml")) else "")])
        log(f"not replayed: {done.notes[0]}")
    else:
        build_s = min(_number(environment, "build_timeout_sec", where, "environment.build_timeout_sec", 600), 1800)
        context = source.context or source.root
        if replay_steps == "docker":
            done = replay_docker(plan, context, state, exclude=source.context_exclude, log=log)
        elif replay_steps:
            done = replay(plan, context, state, exclude=source.context_exclude,
                          limits=SandboxLimits(cpu_s=int(build_s), memory_mb=max(2048, memory_mb),
                                               processes=256, file_mb=1024),
                          step_timeout_s=build_s, log=log)
        else:  # files only: COPY/ADD, no RUN
            plain = DockerPlan(plan.base_images, plan.workdir, [s for s in plan.steps if s.op != "RUN"],
                               plan.unsupported)
            done = replay(plain, context, state, exclude=source.context_exclude,
                          limits=SandboxLimits(), step_timeout_s=1, log=log)
            done.notes += [f"{s.raw}: not replayed (--no-replay)" for s in plan.steps if s.op == "RUN"]

    def warn(line: str) -> None:
        done.notes.append(line)
        log(f"warning: {line}")

    done.env.update(_runtime_env(environment, warn))
    scrub(state, done.notes.append, "state/")
    return done


def _step_states(source: Source, plan: DockerPlan, done: Replay, base: Path, states: list[Path],
                 replay_steps: bool | str, log: Callable[[str], None]) -> None:
    """Each step's starting state in `states`, as Harbor's one container has it when the step's
    agent starts: the image's (`base`), then for each earlier step its `workdir/` files, its
    `setup.sh` and its solution, then the step's own `workdir/` and `setup.sh`; the scripts run in
    the offline sandbox over the workspace. A script that fails refuses the import: a later step
    would start from a state its author never saw."""
    where = source.root / "task.toml"
    if replay_steps is False:
        raise TaskFormatError(f"{where}: steps: not imported with --replay none (the earlier steps' solutions "
                              "must run to make each step's starting state)", file=str(where), field="steps")
    for step in source.steps[:-1]:
        if step.solution is None:
            raise TaskFormatError(f"{where}: steps[{step.index}] ({step.name}): not imported: no "
                                  f"steps/{step.name}/solution/solve.sh, so the steps after it have no starting "
                                  "state", file=str(where), field=f"steps[{step.index}]")
    agent_map = {plan.workdir: AGENT_WORKSPACE, "/solution": AGENT_SOLUTION}
    env = {k: remap(v, agent_map) for k, v in done.env.items()}
    environment = _table(source.config, "environment")
    build_s = min(_number(environment, "build_timeout_sec", where, "environment.build_timeout_sec", 600), 1800)
    memory_mb = max(2048, min(_memory_mb(environment, where), 65_536))
    runner = StateRunner(SandboxLimits(cpu_s=int(build_s), memory_mb=memory_mb, processes=256, file_mb=1024),
                         build_s)

    def note(line: str) -> None:
        done.notes.append(line)
        log(line)

    def run(step: StepSource, what: str, script: str, before: str) -> None:
        res = runner.run(["/bin/bash", "-c"], script, AGENT_WORKSPACE, env)
        if res.timed_out or res.exit_code != 0:
            tail = res.output.strip()[-300:].replace("\n", " | ")
            raise TaskFormatError(f"{where}: steps[{step.index}] ({step.name}): not imported: {what} "
                                  + (f"timed out after {build_s:g}s" if res.timed_out else f"exits {res.exit_code}")
                                  + f" while making {before}'s starting state: {tail}", file=str(where),
                                  field=f"steps[{step.index}]")
        log(f"replayed: {what}")

    work = Confined(runner.work)
    try:
        work.copy(base, base, ".", note, label="state/")
        _rewrite_tree(runner.work, agent_map)
        for step, state in zip(source.steps, states, strict=True):
            label = f"steps/{step.name}/workdir/"
            if step.workdir is not None:
                work.copy(step.workdir, source.root, ".", note, label=label, skip_top={"setup.sh"})
                _rewrite_tree(runner.work, agent_map)
            if step.setup is not None:
                run(step, f"{label}setup.sh", remap(step.setup, agent_map), f"step {step.name}")
            runner.snapshot(Confined(state), note)
            scrub(state, note, "state/")
            if step.index + 1 < len(source.steps):
                later = source.steps[step.index + 1].name
                solve = _solve_script(step.solution or "", step.solution_extras, source.root, agent_map,
                                      {**done.env, **_env_table(_table(source.config, "solution"), "env", where,
                                                                "solution.env")}, lambda _: None)
                run(step, f"steps/{step.name}/solution/solve.sh", solve, f"step {later}")
    finally:
        runner.close(None, note)


def _write_task(source: Source, folder: Path, task_id: str, plan: DockerPlan, done: Replay,
                log: Callable[[str], None]) -> None:
    """The task's files around `folder/state` (made already): prompt, tests, solution, task.yaml."""
    cfg, where = source.config, source.root / ("task.toml" if source.layout == "harbor" else "task.yaml")
    task_meta, meta = _table(cfg, "task"), _table(cfg, "metadata")
    agent, verifier, environment = _table(cfg, "agent"), _table(cfg, "verifier"), _table(cfg, "environment")
    agent_map = {plan.workdir: AGENT_WORKSPACE, "/solution": AGENT_SOLUTION}
    verify_map = {plan.workdir: f"{VERIFY_ROOT}/app", "/tests": f"{VERIFY_ROOT}/tests", "/logs": f"{VERIFY_ROOT}/logs"}
    memory_mb = max(64, min(_memory_mb(environment, where), 65_536))
    episode = min(_number(agent, "timeout_sec", where, "agent.timeout_sec", 1800), 86_400)
    verifier_timeout = _number(verifier, "timeout_sec", where, "verifier.timeout_sec", 600)
    notes: list[str] = []  # the steps' notes come first, then what was not honoured

    def warn(line: str) -> None:
        notes.append(line)
        log(f"warning: {line}")

    state = folder / "state"
    state_rewritten = _rewrite_tree(state, agent_map)
    initial = _initial_state_archive(state, folder / "tests")

    prompt = remap(source.instruction, agent_map).strip() + "\n"
    if source.step and source.step["index"] > 1:  # the agent did not do the earlier steps: say they are done
        prompt += (f"\n(Step {source.step['index']} of {source.step['of']} of a multi-step task: the work of the "
                   "earlier steps is already in the workspace.)\n")
    if done.env:  # the image's ENV: the agent's shell does not have it, so the prompt says it
        prompt += "\nThe task's environment sets: " + "; ".join(
            f"`export {k}={shlex.quote(remap(v, agent_map))}`" for k, v in done.env.items()) + "\n"
    (folder / "prompt.md").write_text(prompt, encoding="utf-8")

    tests = folder / "tests"
    tests.mkdir(exist_ok=True)
    (tests / ".harbor").mkdir()
    hidden = Confined(tests / ".harbor")
    for tests_dir in (source.tests, source.tests_over):  # a step's tests/ over the task's, as Harbor uploads them
        if tests_dir is not None and os.path.lexists(tests_dir):
            hidden.copy(tests_dir, source.root, ".", warn, label=f"{tests_dir.relative_to(source.root)}/",
                        ignore=lambda rel: rel.split("/")[-1] == "__pycache__")
    for name, content in source.extra_test_files.items():
        if isinstance(content, Path):
            try:
                with open_confined(source.root, content) as f:
                    hidden.write(name, f, os.fstat(f.fileno()).st_mode)
            except Refused as e:
                raise TaskFormatError(str(e), file=str(content)) from None
        else:
            hidden.write(name, content.encode("utf-8"))
    scrub(tests / ".harbor", warn, "tests/")
    _rewrite_tree(tests / ".harbor", verify_map)
    cpus = environment.get("cpus")
    cpus = cpus if isinstance(cpus, int | float) and not isinstance(cpus, bool) and 1 <= cpus <= 1024 else None
    extra_env = {k: remap(v, verify_map) for k, v in done.env.items()}
    extra_env.update({k: remap(v, verify_map) for k, v in _env_table(verifier, "env", where, "verifier.env").items()})
    (tests / "test_harbor.py").write_text(
        WRAPPER.replace("{root}", VERIFY_ROOT)
        .replace("{timeout}", repr(min(verifier_timeout, 3000))).replace("{extra_env}", repr(extra_env))
        .replace("{cpus}", repr(int(cpus) if cpus else None)),
        encoding="utf-8")

    notes[:0] = done.notes
    for line in source.warnings:
        warn(line)
    for need, said in source.requires.items():
        warn(f"unavailable here: the task needs {need} ({said}), which no envhub sandbox gives")
    if source.solution is not None:
        (folder / "solution").mkdir()
        solution_env = {**done.env, **_env_table(_table(cfg, "solution"), "env", where, "solution.env")}
        (folder / "solution" / "solve.sh").write_text(
            _solve_script(source.solution, source.solution_extras, source.root, agent_map, solution_env, warn),
            encoding="utf-8")
    else:
        warn(f"no {'solution/solve.sh' if source.layout == 'harbor' else 'solution.sh'}: "
             "the task has no oracle and cannot be validated")

    difficulty = str(meta.get("difficulty", "medium")).lower()
    tags = [str(t) for t in [*meta.get("tags", []), *task_meta.get("keywords", [])] if isinstance(t, str | int)]
    if isinstance(meta.get("category"), str):
        tags.append(meta["category"])
    title = str(task_meta.get("description") or "").strip() or _first_line(source.instruction) or task_id
    if source.step:
        title = f"{title} (step {source.step['index']}/{source.step['of']}: {source.step['step']})"
    config = {
        "id": task_id,
        "family": "terminal",
        "title": short_title(title),
        "difficulty": difficulty if difficulty in ("easy", "medium", "hard") else "medium",
        "tags": sorted({*tags, "harbor"}),
        "limits": {
            "step_timeout_s": min(episode, 600.0),
            "episode_timeout_s": episode,
            # the wrapper stops test.sh at the task's own limit; the margin covers laying out the state
            "verify_timeout_s": min(verifier_timeout + 30, 3600.0),
            "memory_mb": memory_mb,
            **({"cpus": float(cpus)} if cpus else {}),  # the agent's sandbox too, not only test.sh
        },
        "metadata": {"harbor": {
            "source": source.root.name,
            "layout": source.layout,
            "base_images": plan.base_images,
            "workdir": plan.workdir,
            "state_from": done.state_from,
            "replayed_setup": done.replayed,
            "unsupported_setup": notes,
            "env": done.env,
            "path_map": {"agent": agent_map, "verifier": verify_map},
            "state_files_rewritten": state_rewritten,
            "control_state": initial,  # tests/.harbor_initial_state.tar.gz holds the starting state
            "environment": _plain({k: v for k, v in environment.items() if k != "mcp_servers"}),
            "task_metadata": _plain(meta),
            **({"authors": _plain(task_meta["authors"])} if "authors" in task_meta else {}),
            **({"task_version": task_meta["version"]} if "version" in task_meta else {}),
            **({"schema_version": str(v)} if (v := cfg.get("schema_version", cfg.get("version"))) else {}),
            **({"upstream_source": str(cfg["source"])} if "source" in cfg else {}),
            **({"multi_step": source.step} if source.step else {}),
        }},
    }
    if source.requires:  # read by Family.availability: listed, never run here
        config["metadata"]["requires"] = dict(source.requires)
    (folder / "task.yaml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")


#: `${VAR}` or `${VAR:-default}` in `[environment] env` values.
HOST_VARIABLE = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


def _runtime_env(environment: dict[str, Any], warn: Callable[[str], None]) -> dict[str, str]:
    """`[environment] env`: Harbor resolves `${VAR}` from its host at run time. No host value
    enters a task: a default is taken, and a variable with none is left out (a warning)."""
    out = {}
    for k, v in _env_table(environment, "env", Path("task.toml"), "environment.env").items():
        bare = [m.group(1) for m in HOST_VARIABLE.finditer(v) if m.group(2) is None]
        if bare:
            warn(f"environment.env.{k} = {_shown(v)}: not set (Harbor reads ${{{bare[0]}}} from its host; no host "
                 "value enters a task)")
            continue
        out[k] = HOST_VARIABLE.sub(lambda m: m.group(2), v)
    return out


#: The largest state kept as the wrapper's control (tests/.harbor_initial_state.tar.gz).
MAX_CONTROL_STATE_BYTES = 64 * 1024 * 1024


def _initial_state_archive(state: Path, tests: Path) -> bool:
    """The starting state, for the wrapper's control run (one archive: no state file reappears
    among the hidden files, which validation's static check would call a leak). Links are
    archived as links (state/ holds none that leaves it)."""
    if sum(p.lstat().st_size for p in state.rglob("*") if p.is_file() and not p.is_symlink()) \
            > MAX_CONTROL_STATE_BYTES:
        return False
    tests.mkdir(exist_ok=True)
    with tarfile.open(tests / ".harbor_initial_state.tar.gz", "w:gz") as tar:
        for p in sorted(state.iterdir()):
            tar.add(p, arcname=p.name)
    return True


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line
    return ""
