"""One task = one folder.

    tasks/<family>/<name>/
        task.yaml          TaskConfig below (id, family, version, metadata, limits)
        prompt.md          what the agent is asked, verbatim
        state/             public starting state (family-specific: a workspace, seed data, documents)
        tests/             hidden verifier: pytest modules and the data they compare against
        solution/          hidden oracle: `actions.json` (tool calls) or a family-specific script
        validation.json    written only by `envhub validate`

The agent's sandbox is built from `state/` alone; `tests/` and `solution/` never enter it.
A task of a set (`envhub.tasks.sets`) is such a folder too, materialised by the set's generator;
its record is a line of the set's records file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from envhub.errors import TaskFormatError
from envhub.tasks.digest import tree_sha256  # noqa: F401 - envhub.verify.runtime imports it from here
from envhub.tasks.task_yaml import read_config

if TYPE_CHECKING:
    from envhub.tasks.sets import TaskSet

TASK_ID_PATTERN = r"^[a-z0-9][a-z0-9_.-]*(/[a-zA-Z0-9][a-zA-Z0-9_.+-]*)+$"
VALIDATION_FILE = "validation.json"
HIDDEN_DIRS = ("tests", "solution")


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")
    step_timeout_s: float = Field(default=30, gt=0, le=3600)
    episode_timeout_s: float = Field(default=1800, gt=0, le=86_400)
    max_steps: int = Field(default=200, gt=0, le=10_000)
    verify_timeout_s: float = Field(default=120, gt=0, le=3600)
    memory_mb: int = Field(default=1024, ge=64, le=65_536)
    processes: int = Field(default=256, ge=8, le=4096)
    #: CPUs the agent's sandbox may use (a CFS quota; `nproc` reports ceil(cpus)); None: the backend's default.
    cpus: float | None = Field(default=None, gt=0, le=256)


class TaskConfig(BaseModel):
    """`task.yaml`."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=TASK_ID_PATTERN, description="`<family>/<name>`, matching the folder.")
    family: str
    version: int = Field(default=1, ge=1)
    title: str = Field(min_length=1, max_length=200)
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    tags: list[str] = Field(default_factory=list)
    limits: Limits = Field(default_factory=Limits)
    null_expected: Literal["fail", "pass"] = "fail"
    null_reason: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict, description="Family-specific facts.")

    @model_validator(mode="after")
    def _reason_given(self) -> TaskConfig:
        if self.null_expected == "pass" and not self.null_reason:
            raise ValueError("null_expected: pass needs a null_reason")
        return self


@dataclass(frozen=True)
class Task:
    """A loaded task folder."""

    config: TaskConfig
    path: Path
    taskset: TaskSet | None = None  # the set that materialised it (its folder name is its seed)

    @property
    def id(self) -> str:
        return self.config.id

    @property
    def family(self) -> str:
        return self.config.family

    @cached_property
    def prompt(self) -> str:
        return (self.path / "prompt.md").read_text(encoding="utf-8").strip()

    @property
    def state_dir(self) -> Path:
        return self.path / "state"

    @property
    def tests_dir(self) -> Path:
        return self.path / "tests"

    @property
    def solution_dir(self) -> Path:
        return self.path / "solution"

    @property
    def validation_path(self) -> Path:
        """The file that holds the record (a set's task shares its set's)."""
        return self.taskset.records_path if self.taskset else self.path / VALIDATION_FILE

    def validation_record(self) -> dict[str, Any] | None:
        if self.taskset is not None:
            return self.taskset.record(int(self.path.name))
        try:
            return json.loads(self.validation_path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def files_sha256(self) -> str:
        """Hash of every file of the task except its validation record."""
        return tree_sha256(self.path, exclude={VALIDATION_FILE})

    def verifier_sha256(self) -> str:
        return tree_sha256(self.tests_dir)

    @classmethod
    def load(cls, path: Path, taskset: TaskSet | None = None, raw: dict[str, Any] | None = None) -> Task:
        """Load and schema-check a task folder; errors name the file and field. `raw`: its
        `task.yaml` already parsed (a set's, kept by `TaskSet.configs`)."""
        path = path.resolve()
        cfg_path = path / "task.yaml"
        if raw is None:
            raw = read_config(cfg_path)
        if not isinstance(raw, dict):
            raise TaskFormatError(f"{cfg_path}: must be a mapping", file=str(cfg_path))
        try:
            config = TaskConfig.model_validate(raw)
        except ValidationError as e:
            first = e.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "(root)"
            raise TaskFormatError(f"{cfg_path}: field {field!r}: {first['msg']}",
                                  file=str(cfg_path), field=field) from e
        expected_suffix = config.id.split("/", 1)[1]
        if not path.as_posix().endswith("/" + expected_suffix) and path.name != expected_suffix:
            raise TaskFormatError(f"{cfg_path}: field 'id': {config.id!r} does not match folder {path.name!r}",
                                  file=str(cfg_path), field="id")
        if config.id.split("/", 1)[0] != config.family:
            raise TaskFormatError(f"{cfg_path}: field 'id': must start with the family {config.family!r}",
                                  file=str(cfg_path), field="id")
        for required in ("prompt.md",):
            if not (path / required).is_file():
                raise TaskFormatError(f"{path / required}: missing", file=str(path / required))
        if not (path / "tests").is_dir() or not any((path / "tests").glob("test_*.py")):
            raise TaskFormatError(f"{path / 'tests'}: no test_*.py verifier", file=str(path / "tests"))
        return cls(config=config, path=path, taskset=taskset)


def short_title(text: str, limit: int = 100) -> str:
    """One line of at most `limit` characters, cut at a word boundary with an ellipsis (imported
    titles come from free text: a problem statement, an instruction)."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[:limit - 1]
    if " " in cut and not line[limit - 1].isspace():
        cut = cut[:cut.rfind(" ")]
    return cut.rstrip(" ,;:.-") + "…"
