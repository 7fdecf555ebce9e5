"""OfficeVerse: a workspace of docx/xlsx/pptx/pdf documents and tools to read, create and edit them.

State is a folder on the host (`ctx.workdir/workspace`, a copy of the task's `state/`); tools are
Python functions in the server process, run in a worker thread so the event loop never blocks.
A pool of warm LibreOffice workers per server recalculates workbooks and exports PDFs (see `lo.py`).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

from envhub.config import Settings
from envhub.env import EnvContext, Environment, Family, Mutator
from envhub.errors import EnvError
from envhub.spec import Observation, ToolCall, ToolSpec
from envhub.tasks.model import Task
from envhub.tools import Tool
from environments.office import export, judge, liveness
from environments.office.lo import OfficePool
from environments.office.mutators import MUTATORS
from environments.office.settings import OfficeSettings
from environments.office.tools import TOOLS, Tools
from environments.office.workspace import Workspace

if TYPE_CHECKING:
    import typer


class OfficeEnvironment(Environment):
    def __init__(self, ctx: EnvContext, family: OfficeFamily) -> None:
        self.ctx = ctx
        self.family = family
        self.ws = Workspace(ctx.workdir / "workspace")
        self.task: Task | None = None
        self.tools_ = Tools(self.ws, family.office, ctx.settings.max_output_bytes)

    def tools(self) -> list[Tool]:
        return TOOLS

    async def reset(self, *, task: Task, seed: int | None = None) -> Observation:
        self.task = task
        try:
            await asyncio.to_thread(self.ws.reset_from, task.state_dir)
        except OSError as e:
            raise EnvError(f"cannot prepare the workspace: {e}") from e
        files = [self.ws.rel(p) for p in self.ws.files()]
        return Observation(text=f"{task.prompt}\n\nWorkspace files: {', '.join(files) or '(none)'}",
                           data={"files": files})

    async def step(self, call: ToolCall) -> Observation:
        if self.task is None:
            raise EnvError("environment was not reset")
        text, data = await asyncio.to_thread(self.tools_.run, call.tool, dict(call.arguments))
        return Observation(text=text, data=data)

    async def export_state(self, dest: Path) -> None:
        if self.task is None:
            raise EnvError("environment was not reset")
        await asyncio.to_thread(export.copy_workspace, self.ws.root, dest)
        await asyncio.to_thread(export.refresh_recalc, dest, self.family.office(),
                                liveness.load(self.task.tests_dir))
        settings = self.family.settings(self.ctx.settings)
        rubric = judge.rubric_for(self.task.config.metadata.get("task_type"))
        if settings.judge_url and rubric:
            files = [dest / f for f in self.task.config.metadata.get("deliverables", [])]
            scores = await asyncio.to_thread(judge.judge, settings.judge_url, settings.judge_model,
                                             self.task.prompt, rubric, files)
            (dest / export.ENVHUB_DIR / "judge.json").write_text(json.dumps({"scores": scores}))
        for p in (dest, *dest.rglob("*")):
            p.chmod(0o755 if p.is_dir() else 0o644)

    async def close(self) -> None:
        self.task = None


class OfficeFamily(Family):
    name = "office"
    description = ("OfficeVerse: business documents (docx, xlsx, pptx, pdf) across 11 industries and 12 task types; "
                   "verifiers read parsed documents and LibreOffice-recalculated values.")
    # State export, recalculation, the judge and mutators judge a task; the document tools
    # (tools.py, writers.py, readers.py) and the generator only serve the agent and the author: CI's
    # oracle smoke over HTTP guards them. The task types' builders (`tasktypes/`) and checks
    # (`checks/`, copied into each task's tests/ by the generator, never imported at verify) are
    # the task's own files, which key its record by their bytes: a change to either re-validates
    # exactly the tasks it changed.
    judged_by = ("env.py", "export.py", "liveness.py", "judge.py", "lo.py", "lo_worker.py", "mutators.py",
                 "data.py", "workspace.py")
    facet_labels = {"industry": "industry", "task_type": "task type", "language": "language"}
    settings_class = OfficeSettings
    cli_aliases = {"synth office": "synth"}

    @classmethod
    def cli(cls) -> typer.Typer:
        from environments.office.cli import app

        return app

    @classmethod
    def group(cls, metadata: dict) -> str:
        """`industry × task type (language)`."""
        f = cls.facets(metadata)
        if not f.get("industry"):
            return ""
        return f"{f['industry']} × {f.get('task_type', '?')}" + (f" ({f['language']})" if f.get("language") else "")

    def __init__(self) -> None:
        self._office: OfficePool | None = None
        self._root: Path | None = None
        self._settings = OfficeSettings()

    def setup(self, settings: Settings) -> None:
        self._root = settings.data_dir / "office"
        self._settings = self.settings(settings)

    def office(self) -> OfficePool:
        """The server's pool of warm offices (each started on first need)."""
        if self._office is None:
            s = self._settings
            self._office = OfficePool(self._root or s.office_lo_dir, size=s.office_lo_workers,
                                      deadline_s=s.office_lo_deadline_s, memory_mb=s.office_lo_memory_mb)
        return self._office

    async def shutdown(self) -> None:
        if self._office is not None:
            await asyncio.to_thread(self._office.kill)

    def make(self, ctx: EnvContext) -> OfficeEnvironment:
        return OfficeEnvironment(ctx, self)

    def tool_specs(self) -> list[ToolSpec]:
        return [t.spec() for t in TOOLS]

    def mutators(self) -> dict[str, Mutator]:
        return dict(MUTATORS)
