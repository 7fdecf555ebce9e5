"""`envhub list` and `show`: the catalogue, local or served."""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.table import Table

from envhub.cli._shared import (
    JsonOpt,
    app,
    check_env,
    console,
    fitted_table,
    group_label,
    missing_here,
    print_json,
    progress_bar,
    status_style,
)
from envhub.config import get_settings
from envhub.records import validation_status


@app.command("list")
def list_tasks(env: str = typer.Option(None, help="Only this family."),
               url: str = typer.Option(None, help="List what a running server (or pool) serves instead of the "
                                                  "local catalog."),
               by: str = typer.Option(None, "--by", help="Count the tasks per value of this metadata key "
                                                        "instead (swe: language, package)."),
               text: str = typer.Option(None, "--q", help="Only tasks whose id, title or prompt has this text "
                                                         "(a set's id lists its tasks)."),
               limit: int = typer.Option(0, min=0, help="Show at most this many tasks (0: all)."),
               offset: int = typer.Option(0, min=0, help="Skip this many first (with --limit: a page)."),
               as_json: JsonOpt = False) -> None:
    """List tasks with their validation status, or count them per language, package, ... (`--by`)."""
    from envhub.tasks.catalog import Catalog

    if url:
        from envhub.client import EnvClient

        with EnvClient(url) as client:
            check_env(env, [e["name"] for e in client.envs()])
            served: list[dict[str, Any]] = []
            while True:  # the API answers a page of at most 5,000
                page = client.tasks(env=env, q=text, limit=5000, offset=len(served))
                served += page
                if len(page) < 5000:
                    break
        rows = [{"id": t["id"], "env": t["env"], "title": t["title"], "difficulty": t["difficulty"],
                 "validation": t["validation"]["status"], "group": group_label(t["env"], t["metadata"]),
                 "by": (t["metadata"] or {}).get(by), "unavailable": t.get("unavailable")} for t in served]
        catalog = None
    else:
        check_env(env)
        from envhub import families

        catalog = Catalog(get_settings().tasks_dir)
        tasks = catalog.filter(env=env, text=text)
        loaded = families.load(sorted({t.family for t in tasks} & set(families.available())))
        rows = [{"id": t.id, "env": t.family, "title": t.config.title, "difficulty": t.config.difficulty,
                 "validation": validation_status(t), "group": group_label(t.family, t.config.metadata),
                 "by": t.config.metadata.get(by), "unavailable": missing_here(loaded, t)} for t in tasks]
    if by:
        _print_counts(rows, by, env, as_json)
        return
    total = len(rows)
    rows = rows[offset:offset + limit] if limit else rows[offset:]
    if as_json:
        print_json([{k: v for k, v in r.items() if k != "by"} for r in rows])
        return
    cells = [{**r, "validation": status_style(r["validation"]),
              "runs here": "[red]no[/red]" if r["unavailable"] else "[green]yes[/green]"} for r in rows]
    shown = f"{len(rows)} tasks" if len(rows) == total else f"tasks {offset + 1}-{offset + len(rows)} of {total}"
    table = fitted_table(shown + (f" in {env}" if env else ""), cells,
                          ["id", "group", "difficulty", "validation", "runs here", "title"],
                          spare=["group", "difficulty", "title"], flex=["group", "title"])
    console.print(table)
    fixes: dict[str, list[str]] = {}
    for r in rows:
        if r["unavailable"]:
            fixes.setdefault(f"{r['unavailable']['reason']}; fix: {r['unavailable']['fix']}", []).append(r["id"])
    for why, ids in fixes.items():
        console.print(f"[red]{len(ids)} task(s) cannot run here[/red]: {why}")
    for path, err in (catalog.errors.items() if catalog else ()):
        console.print(f"[red]broken task folder[/red] {path}: {err.detail}")


def _print_counts(rows: list[dict[str, Any]], by: str, env: str | None, as_json: bool) -> None:
    """Tasks per value of metadata key `by` (tasks without the key count under "-")."""
    counts: dict[str, dict[str, Any]] = {}
    for r in rows:
        value = "-" if r["by"] in (None, "") else str(r["by"])
        c = counts.setdefault(value, {by: value, "tasks": 0, "validated": 0, "runs here": 0})
        c["tasks"] += 1
        c["validated"] += r["validation"] == "validated"
        c["runs here"] += not r["unavailable"]
    out = sorted(counts.values(), key=lambda c: (c[by] == "-", c[by]))
    if as_json:
        print_json(out)
        return
    table = Table(title=f"{len(rows)} tasks" + (f" in {env}" if env else "") + f" by {by}")
    for col in (by, "tasks", "validated", "runs here"):
        table.add_column(col, justify="left" if col == by else "right")
    for c in out:
        table.add_row(c[by], *(str(c[k]) for k in ("tasks", "validated", "runs here")))
    console.print(table)



@app.command("sets")
def task_sets(materialize: bool = typer.Option(False, "--materialize",
                                               help="Write every set's missing tasks now (an install step; a "
                                                    "hub does it at start otherwise)."),
              env: str = typer.Option(None, help="Only these families' sets (comma-separated)."),
              as_json: JsonOpt = False) -> None:
    """The task sets (a generator, its version and a seed range) and how many of their tasks are validated."""
    from envhub.tasks.catalog import Catalog

    families = [f.strip() for f in env.split(",") if f.strip()] if env else None
    for family in families or ():
        check_env(family)
    catalog = Catalog(get_settings().tasks_dir, families=families)
    if materialize:
        with progress_bar(quiet=as_json) as progress:
            for taskset in catalog.sets.values():
                bar = progress.add_task(f"materialising {taskset.id}", total=len(taskset.missing(catalog.cache)))
                taskset.materialize(catalog.cache, advance=lambda bar=bar: progress.advance(bar))
    rows = []
    for taskset in catalog.sets.values():
        tasks = [t for t in catalog.tasks.values() if t.taskset is taskset]
        statuses = [validation_status(t) for t in tasks]
        rows.append({"id": taskset.id, "generator": taskset.config.generator, "version": taskset.config.version,
                     "seeds": taskset.config.seeds, "materialised": len(tasks),
                     **{s: statuses.count(s) for s in ("validated", "rejected", "stale", "unvalidated")},
                     "cache": str(taskset.folder(catalog.cache))})
    if as_json:
        print_json(rows)
        return
    counts = ("version", "seeds", "validated", "rejected", "stale", "unvalidated")
    console.print(fitted_table(f"{len(rows)} task sets", [{**r, **{k: str(r[k]) for k in counts}} for r in rows],
                               ["id", *counts, "generator"], spare=["generator"], flex=["generator"], right=counts))
    for path, err in catalog.errors.items():
        console.print(f"[red]broken[/red] {path}: {err.detail}")
    if catalog.errors:
        raise typer.Exit(1)


@app.command()
def show(task_id: str,
         tools_only: bool = typer.Option(False, "--tools", help="Print only the task's tools, in --format."),
         fmt: str = typer.Option("mcp", "--format",
                                 help="Tool format with --tools: openai | anthropic | gemini | mcp."),
         as_json: JsonOpt = False) -> None:
    """Show one task: prompt, tools, metadata, validation record."""
    from envhub import families
    from envhub.tasks.catalog import Catalog
    from envhub.tools import FORMATS, as_format

    catalog = Catalog(get_settings().tasks_dir)
    task = catalog.get(task_id)
    record = task.validation_record() or {}
    specs = families.load([task.family])[task.family].task_tool_specs(task)
    if tools_only:
        if fmt not in FORMATS:
            from envhub.errors import RequestError

            raise RequestError(f"unknown --format {fmt!r}; formats are: {', '.join(FORMATS)}")
        print_json(as_format(specs, fmt))
        return
    tools = [t.name for t in specs]
    info = {"id": task.id, "env": task.family, "title": task.config.title, "difficulty": task.config.difficulty,
            "tags": task.config.tags, "metadata": task.config.metadata, "limits": task.config.limits.model_dump(),
            "tools": tools,  # the record's own status is what it said then: stale shows as stale
            "validation": {**{k: v for k, v in record.items() if k != "key"}, "status": validation_status(task)},
            "prompt": task.prompt, "latency": _task_latency(task.id)}
    if as_json:
        print_json(info)
        return
    table = Table(show_header=False, title=task.id)
    for key in ("env", "title", "difficulty", "tags", "metadata", "limits", "tools"):
        table.add_row(key, json.dumps(info[key], ensure_ascii=False) if not isinstance(info[key], str) else info[key])
    table.add_row("validation", status_style(info["validation"]["status"]) + " " +
                  ", ".join(f"{k}={v}" for k, v in record.items() if k in ("validated_at", "runs", "seconds")))
    for rej in record.get("rejections", []):
        table.add_row("", f"[red]{rej}[/red]")
    _latency_rows(table, info["latency"])
    console.print(table)
    console.print(info["prompt"], markup=False)


def _task_latency(task_id: str) -> dict[str, Any]:
    """Reset/step/verify p50/p99 from recorded episodes: the same figures as the task's web page."""
    from sqlalchemy.exc import SQLAlchemyError

    from envhub.store import EpisodeStore

    store = EpisodeStore(get_settings().store_url)
    try:
        return store.latency(task_id=task_id).model_dump()
    except SQLAlchemyError as e:
        return {"error": f"episode store unreadable: {type(e).__name__}"}
    finally:
        store.engine.dispose()


def _latency_rows(table: Table, latency: dict[str, Any]) -> None:
    from envhub.store.stats import fmt_seconds

    if "error" in latency:
        table.add_row("latency", f"[yellow]{latency['error']}[/yellow]")
        return
    table.add_row("episodes", str(latency["episodes"]))
    for f in latency["figures"]:
        table.add_row(f"{f['op']} latency", f"p50 {fmt_seconds(f['p50_s'])}  p99 {fmt_seconds(f['p99_s'])}  "
                                            f"(n={f['n']})")
