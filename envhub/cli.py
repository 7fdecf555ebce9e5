"""The `envhub` command line (Typer + rich). The library never imports this module."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import resource
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from envhub.config import Settings, get_settings

app = typer.Typer(help="envhub: environments and verifiers for RL agents.", no_args_is_help=True)
import_app = typer.Typer(help="Import tasks from other formats.", no_args_is_help=True)
app.add_typer(import_app, name="import")
console = Console()
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


@app.command()
def setup() -> None:
    """Install the verifier runtime (needs the package index once)."""
    from envhub.verify import runtime

    settings = get_settings()
    runtime.install(settings.data_dir, quiet=False)
    console.print(f"verifier runtime ready in {runtime.site_dir(settings.data_dir)}")


@app.command()
def serve(host: str = typer.Option(None, help="Bind address."), port: int = typer.Option(None),
          env: Annotated[list[str], typer.Option("--env", help="Serve only these families.")] = None,  # type: ignore
          log_level: str = "info") -> None:
    """Serve every registered environment (or --env ones) over HTTP."""
    import uvicorn

    from envhub.server.app import create_app

    settings = get_settings()
    updates: dict[str, Any] = {}
    if host:
        updates["host"] = host
    if port:
        updates["port"] = port
    if env:
        updates["families"] = env
    settings = settings.model_copy(update=updates)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # a live terminal session holds a few fds
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level=log_level,
                ws_max_size=settings.max_body_bytes, ws_per_message_deflate=False, ws="websockets-sansio")


def _hub(settings: Settings | None = None):
    from envhub.server.hub import Hub

    return Hub.build(settings or get_settings())


@app.command("list")
def list_tasks(env: str = typer.Option(None, help="Only this family."),
               url: str = typer.Option(None, help="List what a running server (or pool) serves instead of the "
                                                  "local catalog."),
               as_json: JsonOpt = False) -> None:
    """List tasks with their validation status."""
    from envhub.tasks.catalog import Catalog

    if url:
        from envhub.client import EnvClient

        with EnvClient(url) as client:
            served = client.tasks(env=env, limit=5000)
        rows = [{"id": t["id"], "env": t["env"], "title": t["title"], "difficulty": t["difficulty"],
                 "validation": t["validation"]["status"], "group": _group(t["metadata"]),
                 "unavailable": t.get("unavailable")} for t in served]
        catalog = None
    else:
        from envhub import families

        catalog = Catalog(get_settings().tasks_dir)
        tasks = catalog.filter(env=env)
        loaded = families.load(sorted({t.family for t in tasks} & set(families.available())))
        rows = [{"id": t.id, "env": t.family, "title": t.config.title, "difficulty": t.config.difficulty,
                 "validation": catalog.status(t), "group": _group(t.config.metadata),
                 "unavailable": _missing(loaded, t)} for t in tasks]
    if as_json:
        _print_json(rows)
        return
    table = Table(title=f"{len(rows)} tasks" + (f" in {env}" if env else ""))
    for col in ("id", "group", "difficulty", "validation", "runs here", "title"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["id"], r["group"], r["difficulty"], _status_style(r["validation"]),
                      "[red]no[/red]" if r["unavailable"] else "[green]yes[/green]", r["title"])
    console.print(table)
    fixes: dict[str, list[str]] = {}
    for r in rows:
        if r["unavailable"]:
            fixes.setdefault(f"{r['unavailable']['reason']}; fix: {r['unavailable']['fix']}", []).append(r["id"])
    for why, ids in fixes.items():
        console.print(f"[red]{len(ids)} task(s) cannot run here[/red]: {why}")
    for path, err in (catalog.errors.items() if catalog else ()):
        console.print(f"[red]broken task folder[/red] {path}: {err.detail}")


def _missing(loaded: dict[str, Any], task: Any) -> dict[str, str] | None:
    """What this machine lacks to run `task` (None when it can, or when its family is not installed)."""
    family = loaded.get(task.family)
    missing = family.availability(task) if family else None
    return missing.model_dump() if missing else None


def _group(md: dict[str, Any]) -> str:
    """The family's own grouping: db domain, office industry × task type (+ language), swe language."""
    if md.get("industry"):
        return f"{md['industry']} × {md.get('task_type', '?')}" + (f" ({md['language']})" if md.get("language") else "")
    return str(md.get("domain") or md.get("language") or "")


def _status_style(status: str) -> str:
    color = {"validated": "green", "rejected": "red", "stale": "yellow"}.get(status, "dim")
    return f"[{color}]{status}[/{color}]"


@app.command()
def show(task_id: str, as_json: JsonOpt = False) -> None:
    """Show one task: prompt, tools, metadata, validation record."""
    from envhub import families
    from envhub.tasks.catalog import Catalog

    catalog = Catalog(get_settings().tasks_dir)
    task = catalog.get(task_id)
    record = task.validation_record() or {}
    tools = [t.name for t in families.load([task.family])[task.family].tool_specs()]
    info = {"id": task.id, "env": task.family, "title": task.config.title, "difficulty": task.config.difficulty,
            "tags": task.config.tags, "metadata": task.config.metadata, "limits": task.config.limits.model_dump(),
            "tools": tools, "validation": {"status": catalog.status(task), **{k: v for k, v in record.items()
                                                                                if k != "key"}},
            "prompt": task.prompt, "latency": _task_latency(task.id)}
    if as_json:
        _print_json(info)
        return
    table = Table(show_header=False, title=task.id)
    for key in ("env", "title", "difficulty", "tags", "metadata", "limits", "tools"):
        table.add_row(key, json.dumps(info[key], ensure_ascii=False) if not isinstance(info[key], str) else info[key])
    table.add_row("validation", _status_style(info["validation"]["status"]) + " " +
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


@app.command()
def episodes(task: str = typer.Option(None, "--task", help="Only this task."),
             env: str = typer.Option(None, "--env", help="Only this family."),
             outcome: str = typer.Option(None, help="Only this failure class (or 'unverified')."),
             limit: int = typer.Option(50, min=1, max=10_000), as_json: JsonOpt = False) -> None:
    """Recorded episodes, newest first (from the episode store)."""
    from envhub.store import EpisodeStore
    from envhub.store.stats import fmt_seconds

    store = EpisodeStore(get_settings().store_url)
    try:
        rows, total = store.episodes(env=env, task_id=task, failure_class=outcome, limit=limit)
    finally:
        store.engine.dispose()
    if as_json:
        _print_json({"total": total, "episodes": [r.model_dump(mode="json") for r in rows]})
        return
    table = Table(title=f"{len(rows)} of {total} episodes" + (f" of {task}" if task else ""))
    for col in ("started", "id", "task", "harness", "policy", "steps", "reward", "outcome", "verify"):
        table.add_column(col, justify="right" if col in ("steps", "reward", "verify") else "left")
    for r in rows:
        colour = "green" if r.outcome == "ok" else "dim" if r.outcome == "unverified" else "red"
        table.add_row(r.created_at.strftime("%Y-%m-%d %H:%M:%S"), r.id, r.task_id, r.harness,
                      r.policy_version or "-", str(r.step_count), "-" if r.reward is None else f"{r.reward:.3g}",
                      f"[{colour}]{r.outcome}[/{colour}]", fmt_seconds(r.verify_s))
    console.print(table)


@contextlib.contextmanager
def _local_server(settings: Settings) -> Iterator[str]:
    """An in-process server on a free port, for commands that drive the HTTP API."""
    import uvicorn

    from envhub.server.app import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise typer.Exit(2)
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@app.command()
def run(task_id: str, agent: str = typer.Option("oracle", help="oracle | noop | replay"),
        replay_file: Path = typer.Option(None, "--file", help="JSON list of tool calls, for --agent replay."),
        url: str = typer.Option(None, help="Server URL; default: start one in-process."),
        as_json: JsonOpt = False) -> None:
    """Drive one episode through the HTTP API and print the verify result."""
    from envhub import families
    from envhub.client import EnvClient
    from envhub.spec import ToolCall
    from envhub.tasks.catalog import Catalog

    settings = get_settings()
    task = Catalog(settings.tasks_dir).get(task_id)
    if agent == "oracle":
        actions = families.load([task.family])[task.family].oracle_actions(task)
    elif agent == "noop":
        actions = []
    elif agent == "replay":
        if replay_file is None:
            raise typer.BadParameter("--agent replay needs --file")
        actions = [ToolCall.model_validate(a) for a in json.loads(replay_file.read_text())]
    else:
        raise typer.BadParameter("agent is one of oracle, noop, replay")
    with contextlib.ExitStack() as stack:
        base = url or stack.enter_context(_local_server(settings))
        with EnvClient(base) as client, client.session(task.family, task_id=task.id) as session:
            steps = [session.step(a) for a in actions]
            result = session.verify()
    if as_json:
        _print_json({"task_id": task.id, "agent": agent, "steps": len(steps), **result.model_dump(mode="json")})
    else:
        table = Table(title=f"{task.id} — {agent} agent, {len(steps)} steps")
        for col in ("check", "kind", "passed", "message"):
            table.add_column(col)
        for c in result.checks:
            table.add_row(c.id, c.kind, "[green]yes[/green]" if c.passed else "[red]no[/red]", c.message[:120])
        console.print(table)
        console.print(f"reward [bold]{result.reward:g}[/bold]  passed={result.passed}  "
                      f"failure_class={result.failure_class.value}  trainable={result.trainable}"
                      + (f"\n{result.detail}" if result.detail else ""))
    if not result.trainable:
        raise typer.Exit(3)


@app.command()
def smoke(task_ids: Annotated[list[str], typer.Argument(help="Tasks (default: all, or --env's).")] = None,  # type: ignore
          env: str = typer.Option(None, help="Only this family."),
          per_family: int = typer.Option(0, help="A seeded draw of this many validated tasks per family."),
          seed: int = typer.Option(0, help="Seed for --per-family."),
          url: str = typer.Option(None, help="Server or pool URL; default: start one in-process."),
          as_json: JsonOpt = False) -> None:
    """Oracle and do-nothing episodes through the HTTP API: the oracle must score 1, doing nothing 0."""
    from envhub import families
    from envhub.client import EnvClient
    from envhub.tasks.catalog import Catalog

    settings = get_settings()
    catalog = Catalog(settings.tasks_dir)
    tasks = [catalog.get(t) for t in task_ids] if task_ids else catalog.filter(env=env)
    if per_family:
        rng = random.Random(seed)
        by_family: dict[str, list] = {}
        for t in tasks:
            if catalog.status(t) == "validated":
                by_family.setdefault(t.family, []).append(t)
        tasks = [t for fam in sorted(by_family)
                 for t in rng.sample(by_family[fam], min(per_family, len(by_family[fam])))]
    needed = sorted({t.family for t in tasks})
    loaded = families.load(needed)
    rows: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        base = url or stack.enter_context(
            _local_server(settings.model_copy(update={"families": needed, "store_enabled": False})))
        client = stack.enter_context(EnvClient(base))
        with _progress(quiet=as_json) as progress:
            bar = progress.add_task("episodes", total=2 * len(tasks))
            for task in tasks:
                for agent in ("oracle", "noop"):
                    progress.update(bar, description=f"{task.id} {agent}")
                    rows.append(_smoke_episode(client, task, agent, loaded[task.family]))
                    progress.advance(bar)
                    r = rows[-1]
                    _log_line(progress, as_json, f"{task.id} {agent}: reward {r['reward']:g} "
                                                 f"{'ok' if r['ok'] else 'BAD'} in {r['seconds']:.1f} s")
    bad = [r for r in rows if not r["ok"]]
    timings = _timings([(r["task_id"], r["seconds"]) for r in rows])
    if as_json:
        _print_json({"episodes": rows, "failed": len(bad), "timings": timings})
    else:
        table = Table("task", "agent", "reward", "failure class", "want", "s", "", title=f"{len(rows)} episodes "
                      f"through {url or 'an in-process server'}: {len(rows) - len(bad)} as expected")
        for r in rows:
            table.add_row(r["task_id"], r["agent"], f"{r['reward']:g}", r["failure_class"], r["want"],
                          f"{r['seconds']:.1f}", "[green]ok[/green]" if r["ok"] else f"[red]BAD[/red] {r['detail']}")
        console.print(table)
        _print_timings(timings, "episode time per family (SWE: per language)", "episodes")
    if bad:
        raise typer.Exit(1)


def _progress(quiet: bool) -> Progress:
    """The bar long commands show on stderr (stdout stays for tables and JSON)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True), disable=quiet)


def _log_line(progress: Progress, quiet: bool, line: str) -> None:
    """Where no terminal shows the bar (a CI log), one line per finished item shows progress."""
    if not quiet and not progress.console.is_terminal:
        progress.console.print(line, markup=False, highlight=False)


def _smoke_episode(client: Any, task: Any, agent: str, family: Any) -> dict[str, Any]:
    """One episode; ok when the verdict is judged (failure class ok) with the reward the agent deserves."""
    from envhub.errors import EnvError, EnvhubError
    from envhub.validate.core import deserved

    started = time.monotonic()
    want_pass = agent == "oracle" or task.config.null_expected == "pass"
    row = {"task_id": task.id, "agent": agent, "want": "pass" if want_pass else "fail", "reward": 0.0,
           "failure_class": "", "detail": "", "ok": False}
    try:
        actions = family.oracle_actions(task) if agent == "oracle" else []
        with client.session(task.family, task_id=task.id) as session:
            for action in actions:
                step = session.step(action)
                if step.failure == "env_error":
                    raise EnvError(f"at a step: {step.observation.text[:200]}")
            result = session.verify()
    except EnvhubError as e:
        return {**row, "failure_class": e.failure_class.value, "detail": e.detail[:300],
                "seconds": round(time.monotonic() - started, 2)}
    ok = deserved(result, oracle=agent == "oracle", null_expected=task.config.null_expected)
    why = "; ".join(f"{c.id}: {c.message[:100]}" for c in result.checks if not c.passed)
    return {**row, "reward": result.reward, "failure_class": result.failure_class.value,
            "detail": "" if ok else (result.detail or why)[:300], "ok": ok,
            "seconds": round(time.monotonic() - started, 2)}


@app.command()
def validate(task_ids: Annotated[list[str], typer.Argument(help="Tasks to validate (default: all).")] = None,  # type: ignore
             env: str = typer.Option(None, help="Only this family."),
             runs: int = typer.Option(3, help="Oracle runs per task."),
             sample: int = typer.Option(0, help="Validate a random sample of this many tasks."),
             seed: int = typer.Option(0, help="Seed for --sample."),
             check_records: bool = typer.Option(False, "--check-records",
                                                help="Only check that every record is present, fresh and validated."),
             write: bool = typer.Option(True, help="Write validation.json records."),
             as_json: JsonOpt = False, report: Path = typer.Option(None, help="Write the JSON report here.")) -> None:
    """Validate tasks: static, oracle, null, determinism, mutants, exploits, family checks."""
    from envhub.tasks.catalog import Catalog

    settings = get_settings()
    catalog = Catalog(settings.tasks_dir)
    tasks = [catalog.get(t) for t in task_ids] if task_ids else catalog.filter(env=env)
    if check_records:
        _check_records(catalog, tasks, as_json)
        return
    if sample:  # re-check that records tell the truth: draw from the tasks recorded as validated
        recorded = [t for t in tasks if catalog.status(t) == "validated"]
        tasks = random.Random(seed).sample(recorded, min(sample, len(recorded)))
    # A task this machine cannot run is not judged (a missing toolchain is no verdict on the task).
    from envhub import families

    loaded = families.load(sorted({t.family for t in tasks} & set(families.available())))
    lacking = {t.id: m for t in tasks if (m := _missing(loaded, t))}
    tasks = [t for t in tasks if t.id not in lacking]
    reports = asyncio.run(_validate(settings, tasks, runs, write, quiet=as_json))
    broken = [{"task_folder": str(p), "status": "rejected", "detail": e.detail} for p, e in catalog.errors.items()
              if not env or f"/{env}/" in str(p)]
    data = {"tasks": [r.as_dict() for r in reports], "broken_folders": broken,
            "validated": sum(r.status == "validated" for r in reports),
            "rejected": sum(r.status == "rejected" for r in reports) + len(broken),
            "timings": _timings([(r.task_id, r.seconds) for r in reports]),
            "unavailable": [{"task": task_id, **m} for task_id, m in lacking.items()]}
    if report:
        report.write_text(json.dumps(data, indent=2))
    if as_json:
        _print_json(data)
    else:
        table = Table(title=f"validation: {data['validated']} validated, {data['rejected']} rejected")
        for col in ("task", "static", "oracle", "null", "determinism", "mutants", "exploits", "family", "s", "status"):
            table.add_column(col)
        for r in reports:
            table.add_row(r.task_id, r.summary("static"), r.summary("oracle"), r.summary("null"),
                          r.summary("determinism"), r.summary("mutant"), r.summary("exploit"), r.summary("family"),
                          f"{r.seconds:.1f}", _status_style(r.status))
        console.print(table)
        _print_timings(data["timings"], "validation time per family (SWE: per language)", "tasks")
        for r in reports:
            for f in r.findings:
                if not f.ok:
                    console.print(f"[red]{r.task_id}[/red] {f.check}: {f.detail}", markup=True)
        for b in broken:
            console.print(f"[red]broken[/red] {b['task_folder']}: {b['detail']}")
        for task_id, m in lacking.items():
            console.print(f"[red]{task_id}[/red] not validated (cannot run here, no record written): "
                          f"{m['reason']}; fix: {m['fix']}")
    if data["rejected"] or lacking:
        raise typer.Exit(1)


def _timings(timed: list[tuple[str, float]]) -> dict[str, dict[str, float]]:
    """Seconds per family, and per language for SWE (`swe/go`), so CI's budget stays visible."""
    groups: dict[str, list[float]] = {}
    for task_id, seconds in timed:
        parts = task_id.split("/")
        groups.setdefault("/".join(parts[:2]) if parts[0] == "swe" else parts[0], []).append(seconds)
    return {g: {"count": len(s), "total_s": round(sum(s), 1), "mean_s": round(sum(s) / len(s), 1),
                "max_s": round(max(s), 1)} for g, s in sorted(groups.items())}


def _print_timings(timings: dict[str, dict[str, float]], title: str, unit: str) -> None:
    table = Table("group", unit, "total s", "mean s", "max s", title=title)
    for group, t in timings.items():
        table.add_row(group, str(t["count"]), f"{t['total_s']:.1f}", f"{t['mean_s']:.1f}", f"{t['max_s']:.1f}")
    console.print(table)


def _check_records(catalog: Any, tasks: list, as_json: bool) -> None:
    """Fail on stale or rejected records and broken folders; unvalidated tasks are listed, and
    served as unvalidated (the registry says so), until `envhub validate` has judged them."""
    rows = [{"id": t.id, "status": catalog.status(t)} for t in tasks]
    bad = [r for r in rows if r["status"] in ("stale", "rejected")]
    counts = {s: sum(r["status"] == s for r in rows) for s in ("validated", "unvalidated", "stale", "rejected")}
    if as_json:
        _print_json({"checked": len(rows), **counts, "failing": bad})
    else:
        console.print(f"{len(rows)} records checked: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
        for r in bad:
            console.print(f"  [red]{r['id']}[/red]: {r['status']}")
    if bad or catalog.errors:
        raise typer.Exit(1)


async def _validate(settings: Settings, tasks: list, runs: int, write: bool, quiet: bool) -> list:
    from envhub.validate.core import Validator

    needed = sorted({t.family for t in tasks})
    hub = _hub(settings.model_copy(update={"families": needed, "store_enabled": False}))  # not training episodes
    await hub.start()
    validator = Validator(hub, runs=runs, write=write)
    reports = []
    try:
        with _progress(quiet=quiet) as progress:
            bar = progress.add_task("validating", total=len(tasks))
            for task in tasks:
                progress.update(bar, description=task.id)
                reports.append(await validator.validate(task))
                progress.advance(bar)
                _log_line(progress, quiet, f"{task.id}: {reports[-1].status} in {reports[-1].seconds:.1f} s")
    finally:
        validator.close()
        await hub.stop()
    return reports


@app.command()
def conformance(url: str, env: str = typer.Option("echo", help="Environment to run episodes on."),
                task: str = typer.Option(None, help="Task id (default: the environment picks)."),
                action: str = typer.Option(None, help="JSON tool call for the step checks."),
                as_json: JsonOpt = False) -> None:
    """Black-box protocol conformance against a running server; exits non-zero on any failure."""
    from envhub.conformance import ConformanceSuite

    suite = ConformanceSuite(url, env=env, task_id=task, action=json.loads(action) if action else None)
    outcomes = suite.run()
    failed = [o for o in outcomes if not o.ok]
    if as_json:
        _print_json({"passed": len(outcomes) - len(failed), "failed": len(failed),
                     "checks": [o.__dict__ for o in outcomes]})
    else:
        table = Table(title=f"conformance of {url}")
        table.add_column("check")
        table.add_column("result")
        table.add_column("detail")
        for o in outcomes:
            table.add_row(o.name, "[green]pass[/green]" if o.ok else "[red]FAIL[/red]", o.detail)
        console.print(table)
        print(f"{len(outcomes) - len(failed)} passed, {len(failed)} failed")  # noqa: T201 - the plain closing line
    if failed:
        raise typer.Exit(1)


@import_app.command("harbor")
def import_harbor(src: Path, dest: Path = typer.Option(None, help="Tasks root (default: the hub's).")) -> None:
    """Turn a Harbor / Terminal-Bench task folder into an envhub terminal task."""
    from envhub.tasks.harbor import import_harbor as do_import

    out = do_import(src, dest or get_settings().tasks_dir)
    console.print(f"imported {src} → {out}")


@import_app.command("swebench")
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
        as_json: JsonOpt = False) -> None:
    """Turn SWE-bench-format instances into SWE tasks (unvalidated until `envhub validate` accepts them)."""
    from environments.swe.importer import import_swebench as do_import

    try:
        out = do_import(instances, repo, dest or get_settings().tasks_dir / "swe", language, test_command,
                        report_format, report_file=report_file, build=build)
    except (ValueError, OSError) as e:
        raise typer.BadParameter(str(e)) from e
    if as_json:
        _print_json([str(p) for p in out])
        return
    for p in out:
        console.print(f"imported → {p}")
    console.print(f"{len(out)} task(s); next: envhub validate " + " ".join(f"swe/{language}/{p.name}" for p in out))


@app.command()
def synth(family: str, seed: int = typer.Option(0), count: int = typer.Option(200),
          out: Path = typer.Option(None, help="Output folder (default: tasks/<family>).")) -> None:
    """Generate tasks by execution (db) or from packaged data (office), deterministically per seed."""
    dest = out or get_settings().tasks_dir / family
    if family == "db":
        from environments.db.synth import synthesize

        synthesize(dest, seed=seed, count=count)
    elif family == "office":
        from environments.office.generate import generate

        generate(dest, seed=seed)
    else:
        raise typer.BadParameter("synth knows the families db and office")
    console.print(f"wrote tasks to {dest}")


def _mount_optional() -> None:
    """Family CLIs (toolchains, synthesis) mount themselves when their family is installed."""
    with contextlib.suppress(ImportError):
        from environments.swe.cli import app as toolchains_app

        app.add_typer(toolchains_app, name="toolchains", help="Language toolchains for the SWE family.")


_mount_optional()


def main() -> None:
    """The console script: envhub's own errors print as one clear line, not a traceback."""
    from envhub.errors import EnvhubError

    try:
        code = app(standalone_mode=False)  # click hands back an Exit's code instead of raising it
    except EnvhubError as e:
        console.print(f"[red]error:[/red] {e.detail}", markup=True)
        raise SystemExit(2) from None
    except typer.Exit as e:
        raise SystemExit(e.exit_code) from None
    except click.exceptions.ClickException as e:
        e.show()
        raise SystemExit(e.exit_code) from None
    except click.exceptions.Abort:
        raise SystemExit(1) from None
    if isinstance(code, int):
        raise SystemExit(code)


if __name__ == "__main__":
    main()
