"""`envhub db synth` (also `envhub synth db`): synthesise db tasks by execution."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from envhub.config import get_settings

app = typer.Typer(help="The db family's commands.", no_args_is_help=True)


@app.command()
def synth(seed: int = typer.Option(0), count: int = typer.Option(200),
          out: Path = typer.Option(None, help="Output folder (default: tasks/db).")) -> None:
    """Generate db tasks by execution, deterministically per seed."""
    from environments.db.synth import synthesize

    dest = out or get_settings().tasks_dir / "db"
    synthesize(dest, seed=seed, count=count)
    Console().print(f"wrote tasks to {dest}")
