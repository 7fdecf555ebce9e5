"""The swe family as registered: the judged family plus what only serving needs, namely which of
its tasks this machine's toolchains can run.

It lives apart from `environments/swe/__init__.py` because that file keys the family's validation
records (`SweFamily.judged_by`); availability says nothing about a verdict.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from envhub.spec import MissingRequirement
from environments import swe
from environments.swe import toolchains

if TYPE_CHECKING:
    import typer

    from envhub.config import Settings
    from envhub.tasks.model import Task


class SweFamily(swe.SweFamily):
    facet_labels = {"language": "language"}
    timing_facet = "language"
    cli_aliases = {"toolchains": "toolchains", "import swebench": "import"}

    @classmethod
    def cli(cls) -> typer.Typer:
        from environments.swe.cli import app

        return app

    def setup(self, settings: Settings) -> None:
        super().setup(settings)
        # Run the 18 checks once in the background so the first /v1/envs or reset does not wait.
        threading.Thread(target=toolchains.missing_languages, name="swe-toolchain-checks", daemon=True).start()

    def availability(self, task: Task | None = None) -> MissingRequirement | None:
        if task is None:
            missing = toolchains.missing_languages()
            if not missing:
                return None
            return MissingRequirement(
                reason=f"toolchains missing for {', '.join(missing)} ({len(missing)} of {len(toolchains.TOOLCHAINS)} "
                       "languages): their tasks cannot run here",
                fix="envhub toolchains install " + " ".join(missing))
        md = task.config.metadata
        declared = md.get("toolchain") or {}
        check = declared.get("check") or ""
        if not check or toolchains.present([check])[check]:
            return None
        language = str(md.get("language", "?"))
        fix = (f"envhub toolchains install {language}" if language in toolchains.TOOLCHAINS
               else "apt-get install " + " ".join(declared.get("apt") or ["<the task's toolchain>"]))
        return MissingRequirement(reason=f"the {language} toolchain is missing (`{check}` fails)", fix=fix)
