"""The swe family's commands, mounted by the core as `envhub swe ...` (`SweFamily.cli`):
`toolchains list|install [LANG ...]` (also `envhub toolchains`), the language toolchains, and
`import` (also `envhub import swebench`), which turns SWE-bench instances into tasks; and the task
factory's `sources list|fetch` (pinned upstream packages) and `synth` (tasks made from one)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
    from environments.swe.factory.synth import TWINNED_P2P
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
            # a factory task's suite is a package's: twins for all its PASS_TO_PASS tests would
            # multiply every run; the synthesiser's draw of them, as it made the task
            found = write(task, log=lambda line: None,
                          max_p2p=TWINNED_P2P if task.config.metadata.get("source") else None)
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


sources_app = typer.Typer(help="The factory's pinned package sources (PyPI, npm, Debian).", no_args_is_help=True)
app.add_typer(sources_app, name="sources")
_MANIFESTS = typer.Option(None, "--manifests", help="A folder of package manifests (default: the factory's).")


def _packages(specs: list[str] | None, language: list[str] | None, manifests: Path | None) -> list:
    from environments.swe.factory.packages import PackageError, find, load_all

    try:
        pkgs = [find(s, manifests) for s in specs] if specs else list(load_all(manifests).values())
    except PackageError as e:
        raise typer.BadParameter(str(e)) from e
    return [p for p in pkgs if not language or p.language in language]


@sources_app.command("list")
def sources_list(language: list[str] = typer.Option(None, "--language", help="Only these languages."),
                 by_language: bool = typer.Option(False, "--by-language",
                                                  help="One row per language: the factory's yield summed."),
                 manifests: Path = _MANIFESTS,
                 as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Every pinned package: where it comes from, whether it is fetched, its tasks and the factory's
    yield on it (candidates tried, tasks kept, validation seconds per kept task)."""
    from environments.swe import source
    from environments.swe.factory import shared_builds

    settings = get_settings()
    rows = []
    for p in _packages(None, language, manifests):
        size = sum(source.blob(settings.data_dir, f).stat().st_size for f in p.source.files
                   if source.blob(settings.data_dir, f).is_file())
        rows.append({"id": p.id, "language": p.language, "registry": p.registry, "version": p.version,
                     "fetched": not source.missing(p.source, settings.data_dir), "bytes": size,
                     "shared_build": shared_builds.present(p) if p.prebuilt else None,
                     "suite_s": p.suite_s, "tests": p.tests,
                     **_yield(settings.tasks_dir / "swe" / p.language / p.slug)})
    if by_language:
        _by_language(rows, language, as_json)
        return
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    from envhub.cli._shared import fitted_table

    cells = [{"package": r["id"], "language": r["language"], "registry": r["registry"],
              "fetched": ("[red]no[/red]" if not r["fetched"]
                          else "[green]yes[/green]" if r["shared_build"] is not False
                          else "[yellow]yes, its shared build not made[/yellow]"), "KiB": f"{r['bytes'] / 1024:.0f}",
              "suite s": f"{r['suite_s']:g}", "tests": str(r["tests"]), "tasks": str(r["tasks"]),
              "validated": str(r["validated"]), "tried": str(r["tried"]), "kept": str(r["kept"]),
              "val s": f"{r['validation_s']:.0f}" if r["validation_s"] else "-"} for r in rows]
    console.print(fitted_table("pinned packages (tried/kept: the factory's candidates; val s: validation per task)",
                               cells, ["package", "language", "registry", "fetched", "KiB", "suite s", "tests",
                                       "tasks", "validated", "tried", "kept", "val s"],
                               spare=["registry", "KiB", "suite s", "tried", "val s", "tests", "language"], flex=[],
                               right=("KiB", "suite s", "tests", "tasks", "validated", "tried", "kept", "val s")))
    console.print(f"{len(rows)} packages, {sum(r['fetched'] for r in rows)} fetched, "
                  f"{sum(r['bytes'] for r in rows) / 1e6:.1f} MB in the store")


#: What the factory aims at in every language (issue #37's bar).
TASKS_PER_LANGUAGE = 20


def _by_language(rows: list[dict[str, Any]], languages: list[str] | None, as_json: bool) -> None:
    """The packages' rows summed per language, every language listed (none pinned is a row too)."""
    out = []
    for lang in languages or sorted(toolchains.TOOLCHAINS):
        mine = [r for r in rows if r["language"] == lang]
        validated = sum(r["validated"] for r in mine)
        seconds = sum(r["validation_s"] * r["validated"] for r in mine)
        out.append({"language": lang, "pinned": len(mine), "with_tasks": sum(1 for r in mine if r["validated"]),
                    "tried": sum(r["tried"] for r in mine), "kept": sum(r["kept"] for r in mine),
                    "validated": validated, "validation_s": round(seconds / validated, 1) if validated else 0.0})
    if as_json:
        typer.echo(json.dumps(out, indent=2))
        return
    table = Table("language", "pinned", "with tasks", "tried", "kept", "validated", "val s",
                  title=f"the factory by language (its bar: {TASKS_PER_LANGUAGE} validated tasks in each)")
    for r in out:
        done = r["validated"] >= TASKS_PER_LANGUAGE
        table.add_row(r["language"], str(r["pinned"]), str(r["with_tasks"]), str(r["tried"]), str(r["kept"]),
                      f"[green]{r['validated']}[/green]" if done else str(r["validated"]),
                      f"{r['validation_s']:.0f}" if r["validation_s"] else "-")
    console.print(table)
    console.print(f"{sum(r['validated'] for r in out)} validated factory tasks from "
                  f"{sum(r['with_tasks'] for r in out)} packages; "
                  f"{sum(r['validated'] >= TASKS_PER_LANGUAGE for r in out)} of {len(out)} languages at the bar")


def _yield(root: Path) -> dict[str, Any]:
    """A package's tasks and what made them: `_package/synth.json` (every synth run) and the records."""
    records = [json.loads(r.read_text()) for r in root.glob("*/validation.json")]
    runs = json.loads((root / "_package" / "synth.json").read_text()) if (root / "_package" / "synth.json").is_file() \
        else []
    seconds = [r.get("seconds", 0.0) for r in records if r.get("status") == "validated"]
    return {"tasks": len(list(root.glob("*/task.yaml"))), "validated": len(seconds),
            "tried": sum(r.get("tried", 0) for r in runs), "kept": sum(len(r.get("kept", [])) for r in runs),
            "validation_s": round(sum(seconds) / len(seconds), 1) if seconds else 0.0}


@sources_app.command("fetch")
def sources_fetch(packages: list[str] = typer.Argument(None, help="Package ids or NAME[==VERSION] (default: all)."),
                  language: list[str] = typer.Option(None, "--language", help="Only these languages."),
                  no_apt: bool = typer.Option(False, "--no-apt",
                                              help="Skip the packages' extra Debian packages and shared dependency "
                                                   "builds (both write system folders)."),
                  manifests: Path = _MANIFESTS,
                  as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Download each pinned source once, check its sha256 and keep it in the store (idempotent)."""
    from dataclasses import asdict

    from environments.swe.factory.fetch import FetchError, fetch

    settings = get_settings()
    pkgs = _packages(packages, language, manifests)
    results, failed = [], []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, disable=as_json) as progress:
        bar = progress.add_task("sources", total=len(pkgs))
        for p in pkgs:
            progress.update(bar, description=p.id)
            try:
                # a package's shared build serves its tasks: one without tasks gets it when named
                # (or from `synth`), so a fresh install builds only what the catalogue runs
                serves = bool(packages) or any((settings.tasks_dir / "swe" / p.language / p.slug).glob("*/task.yaml"))
                results.append(asdict(fetch(p, settings.data_dir, apt=not no_apt, shared_build=serves)))
            except FetchError as e:
                failed.append({"package": p.id, "error": str(e)})
                console.print(f"[red]{p.id}: {e}[/red]")
            progress.advance(bar)
    if as_json:
        typer.echo(json.dumps({"fetched": results, "failed": failed}, indent=2))
    else:
        new = [r for r in results if r["stored"]]
        built = sum(r["built"] for r in results)
        console.print(f"{len(results)} sources present ({len(new)} fetched now, "
                      f"{sum(r['bytes'] for r in new) / 1e6:.1f} MB"
                      + (f"; {built} shared dependency builds made" if built else "") + f"); {len(failed)} failed")
    if failed:
        raise typer.Exit(1)


@app.command("synth")
def synth_cmd(package: str = typer.Argument(..., help="PACKAGE[==VERSION] or a package id."),
              count: int = typer.Option(10, "--count", min=1, help="Tasks wanted."),
              seed: int = typer.Option(0, "--seed", help="Seed for the candidates' order and the prompts."),
              pairs: float = typer.Option(0.2, "--pairs", min=0.0, max=1.0, help="Share of tasks with two bugs."),
              cap: int = typer.Option(60, "--cap", min=1, help="Tasks per package at most (existing ones count)."),
              dest: Path = typer.Option(None, help="Tasks root (default: the hub's tasks/)."),
              manifests: Path = _MANIFESTS,
              validate: bool = typer.Option(True, "--validate/--no-validate",
                                            help="Keep only tasks `envhub validate` accepts (their records are "
                                                 "written); --no-validate leaves that to you."),
              rewrite: bool = typer.Option(False, "--rewrite",
                                           help="Make the package's existing tasks anew from their recorded bugs "
                                                "(base, prompt, task.yaml) as the factory makes them today; "
                                                "validate them after."),
              as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Make SWE tasks from a pinned package: mutate its source, keep what its own tests catch stably
    and what the whole validation gate accepts, and write the task folders with their records."""
    from environments.swe.factory.synth import SynthError, Synthesiser

    settings = get_settings()
    pkg = _packages([package], None, manifests)[0]
    root = dest or settings.tasks_dir
    if rewrite:
        _rewrite(pkg, root, settings.data_dir, as_json)
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TextColumn("{task.fields[last]}"), TimeElapsedColumn(), console=console, disable=as_json) as progress:
        bar = progress.add_task(pkg.id, total=count, last="")
        synth = Synthesiser(pkg, tasks_root=root, data_dir=settings.data_dir, seed=seed,
                            log=lambda line: None if as_json else progress.console.print(f"  {line}"),
                            gate=_validation_gate(settings, root) if validate else None)
        try:
            report = synth.synth(count, pairs=pairs, cap=cap,
                                 progress=lambda kept, want, last: progress.update(bar, completed=kept, total=want,
                                                                                   last=last))
        except SynthError as e:
            console.print(f"[red]{e}[/red]")
            raise typer.Exit(1) from e
    out = report.as_dict()
    if as_json:
        typer.echo(json.dumps(out, indent=2))
        return
    from envhub.cli._shared import fitted_table

    row = {"package": report.package, "clean tests": str(report.clean_tests), "candidates": str(report.candidates),
           "tried": str(report.tried), "kept": str(len(report.kept)),
           "outcomes": " ".join(f"{k}={v}" for k, v in sorted(out["outcomes"].items())),
           "seconds": f"{report.seconds:.0f}"}
    console.print(fitted_table(f"{len(report.kept)} of {count} tasks made", [row], list(row),
                               spare=["candidates", "clean tests", "seconds"], flex=["outcomes"],
                               right=("clean tests", "candidates", "tried", "kept", "seconds")))
    if out["rejected_by"]:
        console.print("rejected by: " + ", ".join(f"{k} ({v})" for k, v in sorted(out["rejected_by"].items())))
    if report.kept and not validate:
        console.print("next: envhub validate " + " ".join(report.kept))


def _rewrite(pkg: Any, root: Path, data_dir: Path, as_json: bool) -> None:
    from envhub.errors import TaskInvalid
    from environments.swe.factory.synth import SynthError, Synthesiser

    synth = Synthesiser(pkg, tasks_root=root, data_dir=data_dir)
    done: dict[str, str] = {}
    try:
        synth.prepare()
        for y in sorted(synth.root.glob("*/task.yaml")):
            try:
                synth.rewrite(y.parent)
                done[y.parent.name] = "rewritten"
            except (SynthError, TaskInvalid) as e:
                done[y.parent.name] = f"failed: {e}"[:300]
    finally:
        shutil.rmtree(synth.work, ignore_errors=True)
    if as_json:
        typer.echo(json.dumps(done, indent=2))
    else:
        for name, outcome in done.items():
            console.print(f"{pkg.slug}/{name}: {outcome}")
    if any(v != "rewritten" for v in done.values()):
        raise typer.Exit(1)


def _validation_gate(settings: Any, root: Path) -> Callable[[Path], tuple[str, dict[str, str]]]:
    """`envhub validate` on one freshly written task (its record written beside it)."""
    import asyncio

    from envhub.tasks.catalog import Catalog
    from envhub.validate.core import validate_tasks

    local = settings.model_copy(update={"tasks_dir": root})

    def gate(task_dir: Path) -> tuple[str, dict[str, str]]:
        task = Catalog(root).get("/".join(task_dir.relative_to(root).parts))
        [report] = asyncio.run(validate_tasks(local, [task]))
        return report.status, {f.check: f.detail for f in report.findings if not f.ok}

    return gate
