"""`envhub office synth` (also `envhub synth office`): generate office tasks from packaged data."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from envhub.config import get_settings

app = typer.Typer(help="The office family's commands.", no_args_is_help=True)


@app.command()
def synth(seed: int = typer.Option(0),
          out: Path = typer.Option(None, help="Output folder (default: tasks/office).")) -> None:
    """Generate office tasks from packaged data, deterministically per seed."""
    from environments.office.generate import generate

    dest = out or get_settings().tasks_dir / "office"
    generate(dest, seed=seed)
    Console().print(f"wrote tasks to {dest}")
