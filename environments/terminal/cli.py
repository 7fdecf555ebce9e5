"""`envhub terminal import` (also `envhub import harbor`): bring Harbor / Terminal-Bench tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from envhub.config import get_settings

app = typer.Typer(help="The terminal family's commands.", no_args_is_help=True)
console = Console()


@app.command("import")
def import_harbor(srcs: Annotated[list[Path], typer.Argument(help="Harbor or Terminal-Bench task folders.")],
                  dest: Path = typer.Option(None, help="Tasks root (default: the hub's)."),
                  replay: str = typer.Option("local", help="How the Dockerfile's RUN steps are replayed (offline): "
                                             "local (a bubblewrap sandbox), docker (build the image on envhub's "
                                             "sandbox image) or none (files only).")) -> None:
    """Turn Harbor / Terminal-Bench task folders into envhub terminal tasks; prints every
    Dockerfile step that could not be replayed."""
    from envhub.tasks.model import Task
    from environments.terminal.harbor import import_harbor as do_import

    if replay not in ("local", "docker", "none"):
        raise typer.BadParameter(f"--replay is local, docker or none, not {replay!r}")
    ids = []
    for src in srcs:
        out = do_import(src, dest or get_settings().tasks_dir,
                        replay_steps={"local": True, "docker": "docker", "none": False}[replay],
                        log=lambda line: console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True))
        console.print(f"imported {src} → {out}")
        ids.append(Task.load(out).id)
    console.print("next: envhub validate " + " ".join(ids))
