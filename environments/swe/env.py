"""The judged part of the SWE family: the checkout the agent starts from, the oracle (the gold
patch), the mutator and the family's own validation. The tools are `tools.py`'s, the
commands and availability `family.py`'s."""

from __future__ import annotations

from pathlib import Path

from envhub.env import EnvContext, Family, Mutator, ValidationContext, ValidationFinding
from envhub.errors import TaskInvalid
from envhub.spec import ToolCall, ToolSpec
from envhub.tasks.model import Task
from environments.swe.settings import SweSettings
from environments.swe.tools import TOOLS, SweEnvironment

GOLD_PATCH = "gold.patch"


def gold_patch(task: Task) -> str:
    path = task.solution_dir / GOLD_PATCH
    if not path.is_file():
        raise TaskInvalid(f"{task.id}: {path} is missing")
    return path.read_text(encoding="utf-8")


def _unfix(task: Task, state: Path) -> bool:
    """Mutator: reverse the gold patch in the final state (the bug comes back)."""
    from verifiers.swe import PatchError, apply_patch

    try:
        apply_patch(state, gold_patch(task), reverse=True)
    except PatchError:
        return False
    return True


class SweFamily(Family):
    name = "swe"
    description = ("Fix a real bug in a small repository (18 languages) with editor, shell and test tools; "
                   "graded by the repository's own tests, fail before and pass after.")
    # The checkout the agent starts from (a bundle, or a factory task's pinned source), the oracle
    # and mutator (here), the repeated
    # fail-before/pass-after runs and negative controls. The tools (tools.py), the toolchain
    # installer and the importers serve the agent or the author, not the verdict.
    # The in-process forgers judge only their own language's tasks (`forgers.judge_files`).
    judged_by = ("env.py", "repo.py", "source.py", "validate.py", "controls.py", "settings.py")
    settings_class = SweSettings

    @classmethod
    def judge_files(cls, task: Task | None = None) -> list[Path]:
        from environments.swe import forgers

        language = None if task is None else task.config.metadata.get("language")
        return [*super().judge_files(task), *forgers.judge_files(language)]

    def make(self, ctx: EnvContext) -> SweEnvironment:
        return SweEnvironment(ctx)

    def tool_specs(self) -> list[ToolSpec]:
        return TOOLS

    def oracle_actions(self, task: Task) -> list[ToolCall]:
        return [ToolCall(tool="apply_patch", arguments={"patch": gold_patch(task)})]

    def mutators(self) -> dict[str, Mutator]:
        return {"swe-unfix": _unfix}

    async def validate_task(self, task: Task, ctx: ValidationContext) -> list[ValidationFinding]:
        from environments.swe.validate import validate_task

        return await validate_task(task, ctx, self.settings(ctx.settings).swe_runs)

