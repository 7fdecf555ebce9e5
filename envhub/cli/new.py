"""`envhub new-family`: scaffold a family in the layout every family follows (`envhub/scaffold.py`)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import typer
from rich.table import Table

from envhub.cli._shared import JsonOpt, app, console, print_json
from envhub.config import REPO_ROOT


@app.command("new-family")
def new_family(name: str = typer.Argument(..., help="The family's name: its package, URL segment and task folder."),
               root: Path = typer.Option(REPO_ROOT, help="The checkout to write into."),
               install: bool = typer.Option(True, "--install/--no-install",
                                            help="Register the entry point in this environment (pip install -e "
                                                 "ROOT) and validate the sample task, writing its record."),
               as_json: JsonOpt = False) -> None:
    """Scaffold a working family (`environments/NAME/`, a sample task, a test) and register it."""
    from envhub import families, scaffold

    written = scaffold.write(root, name, set(families.available()))
    steps: list[tuple[str, int]] = []
    if install:
        with console.status("registering the entry point (pip install -e) and validating the sample task"):
            for label, argv in (
                    ("pip install -e", [sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                                        "--disable-pip-version-check", "-e", str(root)]),
                    ("envhub validate", [sys.executable, "-m", "envhub.cli", "validate", "--env", name, "--json"])):
                done = subprocess.run(argv, cwd=root, capture_output=True, text=True)
                steps.append((label, done.returncode))
                if done.returncode:
                    console.print(done.stdout[-3000:] + done.stderr[-3000:], highlight=False, markup=False)
                    break
    if as_json:
        print_json({"family": name, "written": [asdict(w) for w in written],
                    "steps": [{"step": s, "rc": rc} for s, rc in steps]})
    else:
        table = Table(title=f"family {name!r}")
        table.add_column("file")
        table.add_column("what it is")
        for w in written:
            table.add_row(w.path, w.what)
        console.print(table)
        for label, rc in steps:
            console.print(f"{label}: {'[green]ok[/green]' if rc == 0 else f'[red]exit {rc}[/red]'}")
        test = Path("tests") / name
        console.print(f"next: .venv/bin/python -m pytest -q {test}" + (
            "" if install else f"  (first: pip install -e . and envhub validate --env {name})"))
    if any(rc for _, rc in steps):
        raise typer.Exit(1)
