"""`envhub terminal import` (also `envhub import harbor`): bring Harbor / Terminal-Bench tasks.

A batch goes on past a folder that cannot be imported: each source gets one row (imported,
refused with the reason, or failed), as a table or, with `--json`, as a JSON list on stdout; the
exit status is 1 when any row is not `imported`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from envhub.config import get_settings

app = typer.Typer(help="The terminal family's commands.", no_args_is_help=True)
console = Console()


@app.command("import")
def import_harbor(srcs: Annotated[list[Path], typer.Argument(help="Harbor or Terminal-Bench task folders.")],
                  dest: Path = typer.Option(None, help="Tasks root (default: the hub's)."),
                  replay: str = typer.Option("local", help="How the Dockerfile's RUN steps are replayed (offline): "
                                             "local (a bubblewrap sandbox), docker (build the image on envhub's "
                                             "sandbox image) or none (files only)."),
                  force: bool = typer.Option(False, "--force", help="Replace a task that exists (also one imported "
                                             "earlier in this run from a folder whose name slugs alike)."),
                  as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON (stdout), no table.")
                  ) -> None:
    """Turn Harbor / Terminal-Bench task folders into envhub terminal tasks; prints every
    Dockerfile step that could not be replayed and every field not honoured."""
    from envhub.errors import EnvhubError
    from envhub.tasks.model import Task
    from environments.terminal.harbor import import_all

    if replay not in ("local", "docker", "none"):
        raise typer.BadParameter(f"--replay is local, docker or none, not {replay!r}")
    rows: list[dict[str, Any]] = []
    seen: dict[Path, Path] = {}  # task folder -> the source imported there in this run
    for src in srcs:
        row: dict[str, Any] = {"source": str(src), "status": "imported", "id": None, "path": None, "ids": [],
                               "error": None, "warnings": []}
        rows.append(row)

        def log(line: str, row: dict[str, Any] = row) -> None:
            if line.startswith("warning: "):
                row["warnings"].append(line.removeprefix("warning: "))
            if not as_json:
                console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)

        try:
            outs = import_all(src, dest or get_settings().tasks_dir, overwrite=force,
                              replay_steps={"local": True, "docker": "docker", "none": False}[replay], log=log)
            # a multi-step task is one task per step: the row names them all
            ids = [Task.load(out).id for out in outs]
            row.update(id=", ".join(ids), ids=ids, path=", ".join(str(out) for out in outs))
            for out in outs:
                if out in seen:
                    row["warnings"].append(f"replaced {Task.load(out).id} imported from {seen[out]} earlier in "
                                           "this run")
                seen[out] = src
        except EnvhubError as e:
            row.update(status="refused", error=" ".join(str(e.detail).split()))
        except Exception as e:  # noqa: BLE001 - a batch goes on; the row says what happened
            row.update(status="failed", error=f"{type(e).__name__}: {' '.join(str(e).split())}"[:500])
        if not as_json:
            console.print(f"{row['status']} {src}" + (f" → {row['path']}" if row["path"] else f": {row['error']}"),
                          markup=False, highlight=False, soft_wrap=True)
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
    else:
        table = Table()
        for column in ("source", "status", "task / reason", "warnings"):
            table.add_column(column, overflow="fold")
        for r in rows:
            table.add_row(r["source"], r["status"], r["id"] or r["error"], str(len(r["warnings"])))
        console.print(table)
        ids = [i for r in rows if r["status"] == "imported" for i in r["ids"]]
        if ids:
            console.print("next: envhub validate " + " ".join(ids), markup=False, highlight=False, soft_wrap=True)
    if any(r["status"] != "imported" for r in rows):
        raise typer.Exit(1)
