"""`envhub new-family NAME`: a new environment family in the layout every family follows.

It writes the family's folder (`environments/NAME/`: `__init__.py`, `env.py` that judges,
`family.py` that the entry point registers, `tools.py`, `mutators.py`), one task with its oracle
and verifier (`tasks/NAME/hello/`), a test that plays the oracle and a do-nothing episode through
the session manager (`tests/NAME/`), and the entry point in `pyproject.toml`. The family is a
working one (a notebook: the agent writes notes, the verifier reads them), so what a new author
changes is a passing family, never a blank page. The layout is `docs/architecture.md`'s "A
family's folder"; `tests/core/test_architecture.py` holds every family to it.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from envhub.errors import InvalidRequest

ENTRY_POINTS = '[project.entry-points."envhub.families"]'
_NAME = re.compile(r"[a-z][a-z0-9_]{1,30}")


class ScaffoldError(InvalidRequest):
    """A name that cannot be a family, or a family that is there already."""


def class_prefix(name: str) -> str:
    """`sql_lab` -> `SqlLab`: the family's classes are `SqlLabFamily`, `SqlLabEnvironment`."""
    return "".join(part.capitalize() for part in name.split("_"))


def check_name(name: str, root: Path, taken: set[str]) -> None:
    if not _NAME.fullmatch(name) or keyword.iskeyword(name):
        raise ScaffoldError(f"{name!r} cannot name a family: 2-31 characters, a lowercase letter first, then "
                            "lowercase letters, digits or '_' (it is a Python package and a URL segment)")
    if name in taken:
        raise ScaffoldError(f"a family named {name!r} is registered already")
    for rel in (f"environments/{name}", f"tasks/{name}", f"tests/{name}"):
        if (root / rel).exists():
            raise ScaffoldError(f"{rel} exists already: choose another name, or remove it first")


@dataclass(frozen=True)
class Written:
    path: str  #: relative to the root
    what: str


def files(name: str) -> dict[str, tuple[str, str]]:
    """Relative path -> (what it is, its text)."""
    n, cls = name, class_prefix(name)
    env = f"environments/{n}"
    return {
        f"{env}/__init__.py": ("what the family is; its registered classes", _INIT.format(n=n, C=cls)),
        f"{env}/env.py": ("judged: the environment's state and export, the judged family", _ENV.format(n=n, C=cls)),
        f"{env}/family.py": ("what the entry point registers: the judged family plus serving-only parts",
                             _FAMILY.format(n=n, C=cls)),
        f"{env}/tools.py": ("the agent's tools (not judged)", _TOOLS.format(n=n, C=cls)),
        f"{env}/mutators.py": ("judged: validation mutants, each must fail the verifier", _MUTATORS.format(n=n)),
        f"tasks/{n}/hello/task.yaml": ("the sample task", _TASK_YAML.format(n=n)),
        f"tasks/{n}/hello/prompt.md": ("its prompt", _PROMPT),
        f"tasks/{n}/hello/solution/actions.json": ("its oracle", _ACTIONS),
        f"tasks/{n}/hello/tests/test_state.py": ("its verifier, reading the final state", _VERIFIER),
        f"tests/{n}/__init__.py": ("", ""),
        f"tests/{n}/test_{n}.py": ("the oracle scores 1, doing nothing 0", _TEST.format(n=n, C=cls)),
    }


def register(pyproject: Path, name: str) -> None:
    """Add `name = "environments.name.family:NameFamily"` to the families' entry-point table."""
    text = pyproject.read_text(encoding="utf-8")
    start = text.find(ENTRY_POINTS)
    if start < 0:
        raise ScaffoldError(f"{pyproject} has no {ENTRY_POINTS} table")
    end = text.find("\n\n", start)
    end = len(text.rstrip("\n")) if end < 0 else end
    line = f'{name} = "environments.{name}.family:{class_prefix(name)}Family"'
    pyproject.write_text(text[:end] + "\n" + line + text[end:], encoding="utf-8")


def write(root: Path, name: str, taken: set[str]) -> list[Written]:
    """Write the family `name` under `root` (a checkout of this repository) and register it in its
    `pyproject.toml`; nothing is written when the name is refused."""
    check_name(name, root, taken)
    pyproject = root / "pyproject.toml"
    if ENTRY_POINTS not in pyproject.read_text(encoding="utf-8"):
        raise ScaffoldError(f"{pyproject} has no {ENTRY_POINTS} table")
    out = []
    for rel, (what, text) in files(name).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out.append(Written(rel, what))
    register(pyproject, name)
    out.append(Written("pyproject.toml", "the entry point"))
    return out


# --- the templates -------------------------------------------------------------------------------

_INIT = '''"""The {n} family: a notebook the agent writes in, verified on the notes it leaves.

Replace this with what an agent does here. The folder follows the layout every family follows
(docs/architecture.md, "A family's folder"): `env.py` and `mutators.py` judge (they key the tasks'
validation records), `family.py` is what the entry point registers, `tools.py` serves the agent.
"""

from environments.{n}.family import {C}Environment, {C}Family

__all__ = ["{C}Environment", "{C}Family"]
'''

_ENV = '''"""The judged part of the {n} family: the environment's state, how it is exported for the
verifier, and the family's judging declarations. A change here re-keys the family's validation
records; tools, commands and facets belong elsewhere (`tools.py`, `family.py`)."""

from __future__ import annotations

import json
from pathlib import Path

from envhub.env import EnvContext, Environment, Family, Mutator
from envhub.errors import AgentError
from envhub.spec import Observation, ToolCall, ToolSpec
from envhub.tasks.model import Task
from envhub.tools import Tool

STATE_FILE = "notes.json"  #: what the verifier reads (`tasks/{n}/*/tests/`)


class {C}Environment(Environment):
    """One episode's notebook: the notes written so far."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def tools(self) -> list[Tool]:
        from environments.{n}.tools import TOOLS

        return TOOLS

    async def reset(self, *, task: Task, seed: int | None = None) -> Observation:
        self.notes = []
        return Observation(text=task.prompt)

    async def step(self, call: ToolCall) -> Observation:
        from environments.{n}.tools import HANDLERS

        handler = HANDLERS.get(call.tool)
        if handler is None:
            raise AgentError(f"unknown tool {{call.tool!r}}; the tools are {{', '.join(sorted(HANDLERS))}}")
        return handler(self, call.arguments)

    async def export_state(self, dest: Path) -> None:
        dest.mkdir(parents=True)
        (dest / STATE_FILE).write_text(json.dumps(self.notes))

    async def close(self) -> None:
        self.notes = []


class {C}Family(Family):
    name = "{n}"
    description = "A notebook: write the notes a task asks for."  # one line for the registry
    uses_workdir = False  # the state is in memory; a family with files sets True and uses ctx.workdir
    judged_by = ("env.py", "mutators.py")

    def make(self, ctx: EnvContext) -> {C}Environment:
        return {C}Environment()

    def tool_specs(self) -> list[ToolSpec]:
        from environments.{n}.tools import TOOLS

        return [t.spec() for t in TOOLS]

    def mutators(self) -> dict[str, Mutator]:
        from environments.{n}.mutators import MUTATORS

        return dict(MUTATORS)
'''

_FAMILY = '''"""The {n} family as registered (the entry point names `{C}Family` here): the judged family
plus what only serving needs. Commands (`cli`), facets, availability on this machine and copies of
a live episode (`snapshot`, `restore`) go here: none of them says anything about a verdict, so
none re-keys a record."""

from __future__ import annotations

from environments.{n} import env

{C}Environment = env.{C}Environment


class {C}Family(env.{C}Family):
    pass
'''

_TOOLS = '''"""The {n} family's tools: what the agent calls. Declared once (`Tool`): the core checks every
call's arguments against the declaration before a handler sees them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from envhub.spec import Observation
from envhub.tools import Param, Tool

TOOLS = [
    Tool("write_note", "Add one note to the notebook.", {{"text": Param("string", max_len=10_000)}}),
    Tool("read_notes", "Read every note written so far.", {{}}),
]


def _write_note(env: Any, args: dict[str, Any]) -> Observation:
    env.notes.append(args["text"])
    return Observation(text=f"{{len(env.notes)}} notes", data={{"count": len(env.notes)}})


def _read_notes(env: Any, args: dict[str, Any]) -> Observation:
    return Observation(text="\\n".join(env.notes), data={{"notes": list(env.notes)}})


HANDLERS: dict[str, Callable[[Any, dict[str, Any]], Observation]] = {{
    "write_note": _write_note,
    "read_notes": _read_notes,
}}
'''

_MUTATORS = '''"""Validation mutants of the {n} family: each edits an oracle's exported final state the way a
wrong solution would leave it, and `envhub validate` requires the verifier to fail every one."""

from __future__ import annotations

import json
from pathlib import Path

from envhub.tasks.model import Task
from environments.{n}.env import STATE_FILE


def _forget_last_note(task: Task, state: Path) -> bool:
    path = state / STATE_FILE
    notes = json.loads(path.read_text())
    if not notes:
        return False  # nothing to forget: the mutant does not apply
    path.write_text(json.dumps(notes[:-1]))
    return True


def _misspell_notes(task: Task, state: Path) -> bool:
    path = state / STATE_FILE
    notes = json.loads(path.read_text())
    if not notes:
        return False
    path.write_text(json.dumps([note[::-1] if len(set(note)) > 1 else note + "?" for note in notes]))
    return True


MUTATORS = {{"forget-last-note": _forget_last_note, "misspell-notes": _misspell_notes}}
'''

_TASK_YAML = '''id: {n}/hello
family: {n}
title: Write hello
difficulty: easy
tags: [sample]
limits: {{step_timeout_s: 5, verify_timeout_s: 30}}
'''

_PROMPT = 'Write a note that says exactly "hello".\n'

_ACTIONS = '[{"tool": "write_note", "arguments": {"text": "hello"}}]\n'

_VERIFIER = """import json

from verifiers import STATE, check


@check("wrote-hello")
def test_wrote_hello():
    notes = json.loads((STATE / "notes.json").read_text())
    assert "hello" in notes, f"the notes were {notes!r}"
"""

_TEST = '''"""The {n} family through the real session manager: every task's oracle scores 1.0, doing
nothing scores 0 (judged: failure class `ok`)."""

from __future__ import annotations

import pytest
import pytest_asyncio

from envhub.config import REPO_ROOT
from envhub.spec import ResetRequest, StepRequest
from envhub.tasks.model import Task
from environments.{n} import {C}Family
from tests.conftest import make_settings, running_hub

TASKS = sorted((Task.load(p.parent) for p in (REPO_ROOT / "tasks" / "{n}").glob("*/task.yaml")), key=lambda t: t.id)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def manager():
    async with running_hub(make_settings(families=["{n}"], store_enabled=False)) as hub:
        yield hub.manager


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
async def test_the_oracle_scores_1(manager, task):
    created = await manager.create(ResetRequest(env="{n}", task_id=task.id))
    try:
        for call in {C}Family().oracle_actions(task):
            result = await manager.step(created.session_id, StepRequest(action=call))
            assert not result.observation.is_error, result.observation.text
        verdict = await manager.verify(created.session_id)
        assert (verdict.failure_class, verdict.reward) == ("ok", 1.0), verdict.checks
    finally:
        await manager.close(created.session_id)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
async def test_doing_nothing_scores_0(manager, task):
    created = await manager.create(ResetRequest(env="{n}", task_id=task.id))
    try:
        verdict = await manager.verify(created.session_id)
        assert (verdict.failure_class, verdict.reward) == ("ok", 0.0), verdict.checks
    finally:
        await manager.close(created.session_id)
'''
