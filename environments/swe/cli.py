"""The swe family's commands, mounted by the core as `envhub swe ...` (`SweFamily.cli`):
`toolchains list|install [LANG ...]` (also `envhub toolchains`), the language toolchains, and
`import` (also `envhub import swebench`), which turns SWE-bench instances into tasks."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from envhub.config import get_settings
from environments.swe import toolchains

app = typer.Typer(help="The swe family's commands.", no_args_is_help=True)
toolchains_app = typer.Typer(help="Language toolchains for the swe family (Debian packages).", no_args_is_help=True)
app.add_typer(toolchains_app, name="toolchains")
console = Console()


@toolchains_app.command("list")
def list_cmd(languages: list[str] = typer.Argument(None, help="Languages (default: all 18)."),
             as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show which toolchains are present, their versions and package sizes."""
    try:
        rows = toolchains.list_toolchains(languages or None)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from e
    if as_json:
        typer.echo(json.dumps([r.as_dict() for r in rows], indent=2))
        return
    table = Table("language", "present", "version", "report", "packages", "MiB")
    for r in rows:
        pkgs = " ".join(p if ok else f"[red]{p}[/red]" for p, ok in r.installed.items())
        table.add_row(r.language, "[green]yes[/green]" if r.present else "[red]no[/red]", r.version, r.report, pkgs,
                      f"{r.size_kib / 1024:.1f}")
    console.print(table)


@toolchains_app.command("install")
def install_cmd(languages: list[str] = typer.Argument(None, help="Languages (default: all 18)."),
                dry_run: bool = typer.Option(False, "--dry-run", help="Only list what would be installed.")) -> None:
    """Install toolchains with apt-get (idempotent): sizes first, then a progress bar."""
    progress = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[detail]}"),
                        TimeElapsedColumn(), console=console)
    bars: dict[str, TaskID] = {}
    logged: dict[str, int] = {}
    started = time.monotonic()

    def show(phase: str, percent: float, detail: str) -> None:
        if phase not in bars:
            bars[phase] = progress.add_task(phase, total=100, detail="")
        progress.update(bars[phase], completed=percent, detail=detail[:40])
        if not console.is_terminal and int(percent) // 10 > logged.get(phase, -1):  # a log: a line per 10%
            logged[phase] = int(percent) // 10
            console.print(f"  {phase} {percent:3.0f}%  {detail}  ({time.monotonic() - started:.0f} s)")

    try:
        with progress:
            result = toolchains.install(languages or None, dry_run=dry_run, echo=console.print, progress=show)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from e
    except RuntimeError as e:  # apt cannot plan the install (unknown package, broken lists)
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from e
    if not result["ok"]:
        raise typer.Exit(1)
    if result["missing"] and not dry_run:
        console.print(f"installed {result['unpacked']} packages ({result['download_bytes'] / 1e6:.0f} MB downloaded) "
                      f"in {result['seconds']:.0f} s")
    bad = [r.language for r in toolchains.list_toolchains(languages or None) if not r.present]
    if bad and not dry_run:
        console.print(f"[red]still missing after install: {', '.join(bad)}[/red]")
        raise typer.Exit(1)


@app.command("import")
def import_swebench(
        instances: Path = typer.Argument(..., help="SWE-bench instances: a JSON list, one JSON object or JSONL."),
        repo: Path = typer.Option(..., help="A local git repository holding every instance's base commit."),
        language: str = typer.Option(..., help="The tasks' language (one of `envhub toolchains list`)."),
        test_command: str = typer.Option(..., help="Runs the tests and writes the report to $REPORT_DIR/<file>."),
        report_format: str = typer.Option("junit_xml", help="junit_xml, go_test_json, libtest_json, tap, "
                                                           "rspec_json or nunit_xml."),
        report_file: str = typer.Option("junit.xml", help="The report's file name under $REPORT_DIR."),
        build: str = typer.Option("", help="A build command run before the tests (a failure is the agent's)."),
        dest: Path = typer.Option(None, help="Tasks root (default: the hub's tasks/swe)."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Turn SWE-bench-format instances into SWE tasks (unvalidated until `envhub validate` accepts them)."""
    from environments.swe.importer import import_swebench as do_import

    try:
        out = do_import(instances, repo, dest or get_settings().tasks_dir / "swe", language, test_command,
                        report_format, report_file=report_file, build=build)
    except (ValueError, OSError) as e:
        raise typer.BadParameter(str(e)) from e
    if as_json:
        typer.echo(json.dumps([str(p) for p in out], indent=2))
        return
    for p in out:
        console.print(f"imported → {p}")
    console.print(f"{len(out)} task(s); next: envhub validate " + " ".join(f"swe/{language}/{p.name}" for p in out))


@app.command("twins")
def twins_cmd(task_ids: list[str] = typer.Argument(None, help="SWE task ids (default: every SWE task)."),
              as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Find each task's twins (perturbed copies of its required tests that fail with the gold
    patch) and write them to its tests/twins.json; `envhub validate` checks them again."""
    from envhub.tasks.catalog import Catalog
    from environments.swe.twins import write

    tasks = [t for t in Catalog(get_settings().tasks_dir).for_family("swe")
             if not task_ids or t.id in task_ids or t.id.removeprefix("swe/") in task_ids]
    if task_ids and len(tasks) != len(set(task_ids)):
        raise typer.BadParameter(f"unknown SWE task among {', '.join(task_ids)}")
    rows = []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, disable=as_json) as progress:
        bar = progress.add_task("twins", total=len(tasks))
        for task in tasks:
            progress.update(bar, description=task.id)
            started = time.monotonic()
            found = write(task, log=lambda line: None)
            rows.append({"task": task.id, "twins": len(found), "tests": len({t.test for t in found}),
                         "seconds": round(time.monotonic() - started, 1)})
            progress.advance(bar)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("task", "twins", "tests with twins", "seconds")
    for r in rows:
        table.add_row(r["task"], str(r["twins"]), str(r["tests"]), str(r["seconds"]))
    console.print(table)
