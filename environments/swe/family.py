"""The swe family as registered: the judged family plus what only serving needs, namely which of
its tasks this machine's toolchains can run.

It lives apart from `env.py` because that file keys the family's validation
records (`SweFamily.judged_by`); availability says nothing about a verdict.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from envhub.spec import MissingRequirement
from environments.swe import env, toolchains

if TYPE_CHECKING:
    import typer

    from envhub.config import Settings
    from envhub.tasks.model import Task


def _missing_source(task: Task, data_dir: Path | None) -> MissingRequirement | None:
    """A factory task whose pinned source is not in the store (`envhub swe sources fetch`)."""
    from envhub.config import get_settings
    from environments.swe import source

    src = source.of(task.config.metadata, task.id)
    if src is None or not source.missing(src, data_dir or get_settings().data_dir):
        return None
    return MissingRequirement(reason=f"the source of {src.id} is not fetched", fix=source.fetch_command(src))


SweEnvironment = env.SweEnvironment


class SweFamily(env.SweFamily):
    facet_labels = {"language": "language", "package": "package"}  # package: a factory task's source
    timing_facet = "language"

    @classmethod
    def group(cls, metadata: dict) -> str:
        """`python`, or `python · toolz-0.12.1` for a factory task (tables group by both)."""
        facets = cls.facets(metadata)
        package = facets.get("package", "").split("/", 1)[-1]
        return " · ".join(x for x in (facets.get("language", ""), package) if x)
    cli_aliases = {"toolchains": "toolchains", "import swebench": "import"}

    @classmethod
    def cli(cls) -> typer.Typer:
        from environments.swe.cli import app

        return app

    _data_dir: Path | None = None  # the serving settings' (the store of fetched sources lives there)

    def setup(self, settings: Settings) -> None:
        super().setup(settings)
        self._data_dir = settings.data_dir
        # Run the 18 checks once in the background so the first /v1/envs or reset does not wait.
        threading.Thread(target=toolchains.missing_languages, name="swe-toolchain-checks", daemon=True).start()

    def availability(self, task: Task | None = None) -> MissingRequirement | None:
        if (declared := super().availability(task)) is not None:
            return declared
        if task is None:
            missing = toolchains.missing_languages()
            if not missing:
                return None
            return MissingRequirement(
                reason=f"toolchains missing for {', '.join(missing)} ({len(missing)} of {len(toolchains.TOOLCHAINS)} "
                       "languages): their tasks cannot run here",
                fix="envhub toolchains install " + " ".join(missing))
        md = task.config.metadata
        if (lacking := _missing_source(task, self._data_dir)) is not None:
            return lacking
        declared = md.get("toolchain") or {}
        check = declared.get("check") or ""
        if not check or toolchains.present([check])[check]:
            return None
        language = str(md.get("language", "?"))
        fix = (f"envhub toolchains install {language}" if language in toolchains.TOOLCHAINS
               else "apt-get install " + " ".join(declared.get("apt") or ["<the task's toolchain>"]))
        return MissingRequirement(reason=f"the {language} toolchain is missing (`{check}` fails)", fix=fix)
