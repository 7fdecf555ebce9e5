"""The environment contract every family implements.

A *family* (`Family`) is what a server hosts: it names itself, builds one `Environment` per
session, and knows how to run its oracle and which validation mutators apply to it. An
`Environment` is one live episode. The server owns sessions, leases, deadlines, logging and
verification; an environment only turns tool calls into observations over its own state, and
exports that state for the verifier when asked.

Families register under the `envhub.families` entry-point group (see `pyproject.toml`); the
core never imports a family module by name.
"""

from __future__ import annotations

import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from envhub.errors import AgentError, NotSupported
from envhub.spec import MissingRequirement, Observation, ToolCall, ToolSpec
from envhub.tools import Tool

if TYPE_CHECKING:
    import typer
    from pydantic_settings import BaseSettings

    from envhub.config import Settings
    from envhub.sandbox.base import SandboxBackend
    from envhub.tasks.model import Task
    from envhub.verify.runner import VerifierRunner


#: What a task may declare that it needs (task.yaml `metadata.requires: {name: why}`) and that no
#: envhub sandbox gives, whatever the machine: such a task is listed, but `unavailable` (not run,
#: not validated), with the reason. A name not here is unavailable too: nothing gives it.
NOT_PROVIDED: dict[str, str] = {
    "network": "envhub's sandboxes are offline",
    "gpu": "envhub's sandboxes have no GPU",
    "tpu": "envhub's sandboxes have no TPU",
}


def declared_missing(task: Task) -> MissingRequirement | None:
    """The task's `metadata.requires` (a mapping of what it needs to why, or a list of names) as
    a MissingRequirement; None when it declares nothing."""
    requires = task.config.metadata.get("requires") or {}
    if isinstance(requires, list | tuple):
        requires = {str(name): "" for name in requires}
    if not isinstance(requires, dict) or not requires:
        return None
    parts = [f"needs {name}" + (f" ({why})" if why else "") + f": {NOT_PROVIDED.get(name, 'nothing here gives it')}"
             for name, why in requires.items()]
    return MissingRequirement(reason="; ".join(parts),
                              fix="none on envhub: run the task where it gets what it needs (e.g. in Harbor)")


@dataclass(frozen=True)
class EnvContext:
    """What the server hands a family when it builds an environment."""

    settings: Settings
    sandbox: SandboxBackend
    session_id: str
    #: The folder the sessions' scratch folders are in (`workdir`).
    sessions_dir: Path

    @cached_property
    def workdir(self) -> Path:
        """A private scratch folder for this session (made before `make` when the family's
        `uses_workdir` is true); removed when the session closes. A path made on first use: most
        sessions never need one, and making it showed in a reset's cost."""
        return self.sessions_dir / self.session_id


class Environment(ABC):
    """One live episode of one family.

    Lifecycle: `reset` once, `step` any number of times, `export_state` when the episode is
    judged, `close` always (idempotent). The server serialises calls on one environment, so an
    implementation needs no lock of its own. All methods are coroutines: an environment must not
    block the event loop (run blocking work with `asyncio.to_thread`).
    """

    @abstractmethod
    async def reset(self, *, task: Task, seed: int | None = None) -> Observation:
        """Load `task`'s starting state and return the first observation.

        Args:
            task: The task to load, with its public files.
            seed: Seed for anything random in the environment.

        Raises:
            EnvError: the state could not be prepared (a fault the policy did not cause).
        """

    @abstractmethod
    def tools(self) -> list[Tool]:
        """The tools the agent may call in this episode (known after `reset`), as declarations."""

    @abstractmethod
    async def step(self, call: ToolCall) -> Observation:
        """Run one tool call and return its observation.

        The server has already checked `call` against the tool's declaration: the tool exists
        and its arguments satisfy every `Param` (defaults filled in), so an implementation reads
        them without re-checking types. Read `call`, never change it: when the check changed
        nothing it is the agent's own action, the one the step log keeps. A call that breaks a
        business rule raises `AgentError`; the server turns it into an `agent_error` observation
        and the episode goes on, as a real tool would answer. A command that ran out of its time
        sets `Observation.timed_out` (or raises `AgentTimeout`). Infrastructure faults raise
        `EnvError`; any other exception is a bug in the family: graded `env_error`, counted and
        logged so it gets fixed.
        """

    @abstractmethod
    async def export_state(self, dest: Path) -> None:
        """Freeze the episode and write its final state into the empty folder `dest`.

        The verifier reads `dest` read-only. After this call the agent can change nothing.
        """

    async def snapshot(self, dest: Path) -> dict[str, Any]:
        """Write the episode's live state into the folder `dest` (made here), from which `restore`
        starts another environment in the same state (a fork, a snapshot a later session starts
        from); this one goes on unchanged. Answers what the copy leaves out (shown to the restored
        session's agent). The step log is the core's to keep. A family that cannot copy its live
        state says so (`NotSupported`)."""
        raise NotSupported(f"{type(self).__name__} cannot copy a live episode yet")

    async def restore(self, *, task: Task, state: Path) -> Observation:
        """Instead of `reset`: start this new environment in the state `snapshot` wrote to `state`
        (read only; the caller removes it)."""
        raise NotSupported(f"{type(self).__name__} cannot start from a copied episode yet")

    async def restore_owned(self, *, task: Task, state: Path) -> Observation:
        """`restore` from a folder that is this environment's alone (a fork's own copy), whose files
        it may move into place rather than copy; the caller removes what is left."""
        return await self.restore(task=task, state=state)

    @abstractmethod
    async def close(self) -> None:
        """Release everything; safe to call more than once."""


@dataclass(frozen=True)
class ValidationContext:
    """What validation hands a family's own checks (`Family.validate_task`): the hub's sandbox
    backend and verifier runner, so a family builds none of its own, and the settings."""

    settings: Settings
    backend: SandboxBackend
    verifier: VerifierRunner


#: A state mutator used by validation: edits an exported final state in place; the verifier
#: must then fail. Returns False when it does not apply to this task (nothing was changed).
Mutator = Callable[["Task", Path], bool]


class Family(ABC):
    """An environment family: what a server hosts under one name."""

    #: Set these in all subclasses.
    name: ClassVar[str]
    description: ClassVar[str]
    #: Whether environments keep files in `EnvContext.workdir` (families that do not skip a
    #: mkdir and rmtree per session).
    uses_workdir: ClassVar[bool] = True
    #: The family's files that judge its tasks, relative to its package folder: the code that
    #: exports the final state, builds the oracle's and controls' states, mutates and validates.
    #: Validation records are keyed by these (with the task's files and the verifier code), so
    #: tool code that only serves the agent can change without re-validating the catalogue
    #: (CI's oracle smoke over HTTP guards the tools). Empty: the whole package judges.
    judged_by: ClassVar[tuple[str, ...]] = ()
    #: Task metadata keys that group and filter the family's tasks (the registry page's filters,
    #: `envhub list`'s group column), with their labels, e.g. db's `{"domain": "domain"}`.
    facet_labels: ClassVar[dict[str, str]] = {}
    #: The facet that splits the family's time in `validate` and `smoke` summaries (swe: per language).
    timing_facet: ClassVar[str | None] = None
    #: Old top-level names for the family's commands, kept working: `{"import harbor": "import"}`
    #: mounts the command (or group) `import` of `cli()` as `envhub import harbor` too.
    cli_aliases: ClassVar[dict[str, str]] = {}
    #: The family's own settings: a pydantic-settings class over its `ENVHUB_*` variables (read
    #: through `settings()`); None when it has none.
    settings_class: ClassVar[type[BaseSettings] | None] = None

    @classmethod
    def package_dir(cls) -> Path:
        """The folder of the module that defines the family."""
        return Path(inspect.getfile(cls)).resolve().parent

    @classmethod
    def judge_files(cls, task: Task | None = None) -> list[Path]:
        """The paths named by `judged_by` (the whole package folder when it is empty). A family
        whose judging code splits by task (swe: a forger per language) narrows it to what judges
        `task`; None: all of it."""
        root = cls.package_dir()
        return [root / rel for rel in cls.judged_by] if cls.judged_by else [root]

    @classmethod
    def cli(cls) -> typer.Typer | None:
        """The family's own commands (importers, generators, toolchains), mounted by the core as
        `envhub <family> ...`; None when it has none. Import the command module here, not at the
        top of the family's module: serving never needs it."""
        return None

    @classmethod
    def settings(cls, core: Settings) -> Any:
        """The family's settings: its environment variables, overridden by values of the same name
        given to the core `Settings` (tests and embedders write `Settings(db_family_url=...)`)."""
        if cls.settings_class is None:
            raise TypeError(f"family {cls.name!r} declares no settings_class")
        given = {k: v for k, v in (core.model_extra or {}).items() if k in cls.settings_class.model_fields}
        return cls.settings_class(**given)

    @classmethod
    def facets(cls, metadata: dict) -> dict[str, str]:
        """The task's facet values, in `facet_labels` order. It takes the task's `task.yaml`
        metadata, not a `Task`: a served task list (`envhub list --url`) carries only that."""
        return {k: str(metadata[k]) for k in cls.facet_labels if metadata.get(k) not in (None, "")}

    @classmethod
    def group(cls, metadata: dict) -> str:
        """The task's group in one short line, for tables: by default its first facet."""
        return next(iter(cls.facets(metadata).values()), "")

    @classmethod
    def timing_group(cls, metadata: dict) -> str:
        """Where the task's seconds count in time summaries: the family, or family/facet."""
        value = cls.facets(metadata).get(cls.timing_facet or "")
        return f"{cls.name}/{value}" if value else cls.name

    def setup(self, settings: Settings) -> None:  # noqa: B027 - optional hook
        """Called once when a server starts (open pools, warm caches)."""

    async def shutdown(self) -> None:  # noqa: B027 - optional hook
        """Called once when a server stops."""

    def availability(self, task: Task | None = None) -> MissingRequirement | None:
        """What this machine lacks to run the family (`task=None`) or one task, with the command
        that fixes it; None when it can run. A reset checks it before making anything, and
        `/ready`, `/v1/envs`, the registry page and `envhub list` show it. Called often: cache.
        By default: what the task declares it needs and no envhub sandbox gives (`declared_missing`);
        a family that overrides this asks `super()` first."""
        return declared_missing(task) if task is not None else None

    @abstractmethod
    def make(self, ctx: EnvContext) -> Environment:
        """Build an environment for one session (cheap; `reset` does the work)."""

    @abstractmethod
    def tool_specs(self) -> list[ToolSpec]:
        """Every tool the family's environments offer, in MCP's shape, for the registry
        (`Tool.spec()` of the declarations its environments return from `tools()`)."""

    def task_tool_specs(self, task: Task) -> list[ToolSpec]:
        """The tools a session of `task` offers (by default the family's whole list)."""
        return self.tool_specs()

    def oracle_actions(self, task: Task) -> list[ToolCall]:
        """The reference solution as tool calls; by default `solution/actions.json`."""
        path = task.solution_dir / "actions.json"
        if not path.is_file():
            raise AgentError(f"task {task.id} has no oracle: {path} is missing")
        return [ToolCall.model_validate(a) for a in json.loads(path.read_text())]

    def mutators(self) -> dict[str, Mutator]:
        """Family-specific validation mutators, by name."""
        return {}

    async def validate_task(self, task: Task, ctx: ValidationContext) -> list[ValidationFinding]:
        """Family-specific validation beyond oracle/null/determinism/mutants/exploits
        (e.g. the SWE family's repeated fail-before/pass-after runs). Default: none."""
        return []


@dataclass
class ValidationFinding:
    """One row of a validation report."""

    check: str
    ok: bool
    detail: str = ""
    data: dict = field(default_factory=dict)
