"""The `envhub` command line (Typer + rich). The library never imports this module."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
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
from envhub.ray.cli import app as ray_app

app = typer.Typer(help="envhub: environments and verifiers for RL agents.", no_args_is_help=True)
import_app = typer.Typer(help="Import tasks from other formats.", no_args_is_help=True)
app.add_typer(import_app, name="import")
console = Console()
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def _check_env(env: str | None, known: Any = None) -> None:
    """A misspelled --env fails (exit 2, with a "did you mean") instead of matching nothing: an
    empty result would let a CI gate with a typo pass. `known`: the names served; default installed."""
    if not env:
        return
    from envhub import families
    from envhub.errors import NotFound

    known = families.available() if known is None else known
    if env not in known:
        raise NotFound.for_name("environment", env, known)


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
        for name in env:
            _check_env(name)
        updates["families"] = env
    settings = settings.model_copy(update=updates)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # a live terminal session holds a few fds
    console.print(f"episode store: {settings.store_label() if settings.store_enabled else 'off'}", highlight=False,
                  soft_wrap=True)
    try:
        served = create_app(settings)
    except ValueError as e:  # e.g. a public interface without API keys
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(2) from None
    uvicorn.run(served, host=settings.host, port=settings.port, log_level=log_level,
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
            _check_env(env, [e["name"] for e in client.envs()])
            served = client.tasks(env=env, limit=5000)
        rows = [{"id": t["id"], "env": t["env"], "title": t["title"], "difficulty": t["difficulty"],
                 "validation": t["validation"]["status"], "group": _group(t["metadata"]),
                 "unavailable": t.get("unavailable")} for t in served]
        catalog = None
    else:
        _check_env(env)
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
    cells = [{**r, "validation": _status_style(r["validation"]),
              "runs here": "[red]no[/red]" if r["unavailable"] else "[green]yes[/green]"} for r in rows]
    table = _fitted_table(f"{len(rows)} tasks" + (f" in {env}" if env else ""), cells,
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


def _fitted_table(title: str, rows: list[dict[str, str]], columns: list[str], *, spare: list[str],
                  flex: list[str], right: tuple[str, ...] = ()) -> Table:
    """One line per row at any terminal width, ids never cut (people copy them into commands).

    Rich would squeeze every column into a few letters, or drop one silently. Here `flex` columns
    give way first (cut with an ellipsis, down to 10 cells), then `spare` columns go, in that order.
    """
    from rich import box
    from rich.text import Text

    def width(col: str) -> int:
        return max([len(col)] + [Text.from_markup(r[col]).cell_len for r in rows])

    natural = {c: width(c) for c in columns}
    least = {c: min(natural[c], 10) if c in flex else natural[c] for c in columns}
    shown = list(columns)
    for col in spare:
        if sum(least[c] + 2 for c in shown) <= console.width:
            break
        shown.remove(col)
    free = console.width - sum(natural[c] + 2 for c in shown if c not in flex)
    flexed = [c for c in shown if c in flex]
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    for col in shown:
        limit = max(least[col], free // len(flexed) - 2) if col in flex else None
        table.add_column(col, no_wrap=True, overflow="ellipsis", min_width=least[col] if col in flex else natural[col],
                         max_width=limit, justify="right" if col in right else "left")
    for r in rows:
        table.add_row(*(r[c] for c in shown))
    return table


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
        _print_json(as_format(specs, fmt))
        return
    tools = [t.name for t in specs]
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
             policy: str = typer.Option(None, "--policy", help="Only this policy version."),
             harness: str = typer.Option(None, "--harness", help="Only this harness."),
             limit: int = typer.Option(50, min=1, max=10_000), as_json: JsonOpt = False) -> None:
    """Recorded episodes, newest first (from the episode store)."""
    from envhub.store import EpisodeStore
    from envhub.store.stats import fmt_seconds

    _check_env(env)
    settings = get_settings()
    store = EpisodeStore(settings.store_url)
    try:
        rows, total = store.episodes(env=env, task_id=task, failure_class=outcome, policy_version=policy,
                                     harness=harness, limit=limit)
    finally:
        store.engine.dispose()
    if as_json:
        _print_json({"total": total, "episodes": [r.model_dump(mode="json") for r in rows]})
        return
    cells = []
    for r in rows:
        colour = "green" if r.outcome == "ok" else "dim" if r.outcome == "unverified" else "red"
        cells.append({"started": r.created_at.strftime("%Y-%m-%d %H:%M:%S"), "id": r.id, "task": r.task_id,
                      "harness": r.harness, "policy": r.policy_version or "-", "steps": str(r.step_count),
                      "reward": "-" if r.reward is None else f"{r.reward:.3g}",
                      "outcome": f"[{colour}]{r.outcome}[/{colour}]", "verify": fmt_seconds(r.verify_s)})
    table = _fitted_table(f"{len(rows)} of {total} episodes" + (f" of {task}" if task else ""), cells,
                          ["started", "id", "task", "harness", "policy", "steps", "reward", "outcome", "verify"],
                          spare=["harness", "verify", "steps", "policy", "started"], flex=["policy"],
                          right=("steps", "reward", "verify"))
    table.caption = f"store: {settings.store_label()}"
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


AGENTS = ("oracle", "noop", "replay")


@app.command()
def run(task_id: str, agent: str = typer.Option("oracle", help="oracle | noop | replay"),
        replay_file: Path = typer.Option(None, "--file", help="JSON list of tool calls, for --agent replay."),
        url: str = typer.Option(None, envvar="ENVHUB_URL",
                                help="A running server's URL; default: start one in-process (its own store)."),
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
        import difflib

        close = difflib.get_close_matches(agent, AGENTS, n=1)
        raise typer.BadParameter(f"unknown agent {agent!r}" + (f"; did you mean {close[0]!r}?" if close else "")
                                 + f" (one of {', '.join(AGENTS)})", param_hint="--agent")
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
          url: str = typer.Option(None, envvar="ENVHUB_URL",
                                  help="Server or pool URL; default: start one in-process."),
          harness: str = typer.Option("plain", help="Harness skin to play through, or `all` (every skin that "
                                                     "can present each task's family)."),
          as_json: JsonOpt = False) -> None:
    """Oracle and do-nothing episodes through the HTTP API: the oracle must score 1, doing nothing 0.

    With a harness skin the oracle, written once against the family's own tools, is expressed as
    that skin's calls: the same reward through every skin proves a skin loses nothing."""
    from envhub import families
    from envhub.client import EnvClient
    from envhub.tasks.catalog import Catalog

    _check_env(env)
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
        skins = {fam: _skins_for(client, fam, harness) for fam in needed}
        with _progress(quiet=as_json) as progress:
            bar = progress.add_task("episodes", total=2 * sum(len(skins[t.family]) for t in tasks))
            for task in tasks:
                for skin in skins[task.family]:
                    for agent in ("oracle", "noop"):
                        progress.update(bar, description=f"{task.id} {agent} ({skin})")
                        rows.append(_smoke_episode(client, task, agent, loaded[task.family], skin))
                        progress.advance(bar)
                        r = rows[-1]
                        _log_line(progress, as_json, f"{task.id} {agent} ({skin}): reward {r['reward']:g} "
                                                     f"{'ok' if r['ok'] else 'BAD'} in {r['seconds']:.1f} s")
    bad = [r for r in rows if not r["ok"]]
    timings = _timings([(r["task_id"], r["seconds"]) for r in rows])
    if as_json:
        _print_json({"episodes": rows, "failed": len(bad), "timings": timings})
    else:
        table = Table("task", "agent", "harness", "reward", "failure class", "want", "s", "", title=f"{len(rows)} "
                      f"episodes through {url or 'an in-process server'}: {len(rows) - len(bad)} as expected")
        for r in rows:
            table.add_row(r["task_id"], r["agent"], r["harness"], f"{r['reward']:g}", r["failure_class"], r["want"],
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


def _skins_for(client: Any, family: str, harness: str) -> list[str]:
    """The skins to smoke `family` through: the one named, or with `all` every one that can present it."""
    if harness != "all":
        return [harness]
    info = next(e for e in client.envs() if e["name"] == family)
    return [name for name, why in info.get("harnesses", {"plain": None}).items() if why is None]


def _smoke_episode(client: Any, task: Any, agent: str, family: Any, harness: str = "plain") -> dict[str, Any]:
    """One episode; ok when the verdict is judged (failure class ok) with the reward the agent deserves."""
    from envhub import harness as skins
    from envhub.errors import EnvError, EnvhubError
    from envhub.validate.core import deserved

    started = time.monotonic()
    want_pass = agent == "oracle" or task.config.null_expected == "pass"
    row = {"task_id": task.id, "agent": agent, "harness": harness, "want": "pass" if want_pass else "fail",
           "reward": 0.0, "failure_class": "", "detail": "", "ok": False}
    try:
        skin = skins.make(harness)
        actions = [c for a in family.oracle_actions(task) for c in skin.express(a, {})] if agent == "oracle" else []
        with client.session(task.family, task_id=task.id, harness=harness) as session:
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
             jobs: int = typer.Option(min(2, os.cpu_count() or 1), min=1,
                                      help="Tasks validated at once (default: 2, or 1 on a one-core machine)."),
             baselines: bool = typer.Option(False, "--baselines",
                                            help="Only run the constant-policy baselines (mean reward per policy "
                                                 "and family; each must be at most 0.02)."),
             known_over: list[str] = typer.Option([], "--known-over",
                                                  help="With --baselines: a policy known to exceed the target "
                                                       "(shown, not failed)."),
             as_json: JsonOpt = False, report: Path = typer.Option(None, help="Write the JSON report here.")) -> None:
    """Validate tasks: static, oracle, null, determinism, mutants, exploits, family checks."""
    from envhub.tasks.catalog import Catalog

    _check_env(env)
    settings = get_settings()
    catalog = Catalog(settings.tasks_dir)
    tasks = [catalog.get(t) for t in task_ids] if task_ids else catalog.filter(env=env)
    if check_records:
        _check_records(catalog, tasks, as_json)
        return
    if baselines:
        if sample:
            tasks = random.Random(seed).sample(tasks, min(sample, len(tasks)))
        _baselines(settings, tasks, as_json, report, set(known_over))
        return
    if sample:  # re-check that records tell the truth: draw from the tasks recorded as validated
        recorded = [t for t in tasks if catalog.status(t) == "validated"]
        tasks = random.Random(seed).sample(recorded, min(sample, len(recorded)))
    # A task this machine cannot run is not judged (a missing toolchain is no verdict on the task).
    from envhub import families

    loaded = families.load(sorted({t.family for t in tasks} & set(families.available())))
    lacking = {t.id: m for t in tasks if (m := _missing(loaded, t))}
    tasks = [t for t in tasks if t.id not in lacking]
    reports = asyncio.run(_validate(settings, tasks, runs, write, quiet=as_json, jobs=jobs))
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


def _baselines(settings: Settings, tasks: list, as_json: bool, report: Path | None, known_over: set[str]) -> None:
    """`validate --baselines`: every constant policy on every task, mean reward per policy and family."""
    from envhub.validate import baselines as bl

    async def run() -> list:
        hub = _hub(settings.model_copy(update={"families": sorted({t.family for t in tasks}),
                                                "store_enabled": False}))
        await hub.start()
        outcomes = []
        try:
            with _progress(quiet=as_json) as progress:
                bar = progress.add_task("baselines", total=len(tasks) * len(bl.POLICIES))
                for task in tasks:
                    for name, policy in bl.POLICIES.items():
                        progress.update(bar, description=f"{task.id} {name}")
                        o = await bl.run_policy(hub.manager, task, name, policy)
                        progress.advance(bar)
                        if o is not None:
                            outcomes.append(o)
                            _log_line(progress, as_json, f"{task.id} {name}: reward {o.reward:g} {o.failure_class}")
        finally:
            await hub.stop()
        return outcomes

    outcomes = asyncio.run(run())
    rows = bl.summarize(outcomes)
    data = {"target": bl.TARGET, "tasks": len(tasks), "baselines": rows,
            "episodes": [vars(o) for o in outcomes]}
    if report:
        report.write_text(json.dumps(data, indent=2))
    if as_json:
        _print_json({k: v for k, v in data.items() if k != "episodes"})
    else:
        table = Table("family", "policy", "tasks", "judged", "mean reward", "rewarded tasks", "",
                      title=f"constant-policy baselines over {len(tasks)} tasks (target: mean <= {bl.TARGET})")
        for r in rows:
            table.add_row(r["family"], r["policy"], str(r["tasks"]), str(r["judged"]), f"{r['mean_reward']:.4f}",
                          ", ".join(r["rewarded"][:4]) + (" ..." if len(r["rewarded"]) > 4 else ""),
                          "[green]ok[/green]" if r["ok"] else "[red]over[/red]")
        console.print(table)
    if not all(r["ok"] or r["policy"] in known_over for r in rows):
        raise typer.Exit(1)


async def _validate(settings: Settings, tasks: list, runs: int, write: bool, quiet: bool, jobs: int = 1) -> list:
    """Validate `tasks`, `jobs` at a time (one slow task no longer holds up the rest); the reports
    come back in the tasks' order, whatever order they finish in."""
    from envhub.validate.core import Validator

    needed = sorted({t.family for t in tasks})
    hub = _hub(settings.model_copy(update={"families": needed, "store_enabled": False}))  # not training episodes
    await hub.start()
    validator = Validator(hub, runs=runs, write=write)
    slots = asyncio.Semaphore(max(1, jobs))
    try:
        with _progress(quiet=quiet) as progress:
            bar = progress.add_task("validating", total=len(tasks))

            async def one(task: Any) -> Any:
                async with slots:
                    progress.update(bar, description=task.id)
                    report = await validator.validate(task)
                progress.advance(bar)
                _log_line(progress, quiet, f"{task.id}: {report.status} in {report.seconds:.1f} s")
                return report

            reports = list(await asyncio.gather(*(one(t) for t in tasks)))
    finally:
        validator.close()
        await hub.stop()
    return reports


@app.command()
def conformance(url: str, env: str = typer.Option("echo", help="Environment to run episodes on."),
                task: str = typer.Option(None, help="Task id (default: the environment picks)."),
                action: str = typer.Option(None, help="JSON tool call for the step checks."),
                api_key: str = typer.Option(None, envvar="ENVHUB_API_KEY", show_default=False,
                                            help="API key, for a server with keys on."),
                as_json: JsonOpt = False) -> None:
    """Black-box protocol conformance against a running server; exits non-zero on any failure."""
    from envhub.conformance import ConformanceSuite

    suite = ConformanceSuite(url, env=env, task_id=task, action=json.loads(action) if action else None,
                             api_key=api_key)
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


keys_app = typer.Typer(help="API keys (envhub.server.auth): the server stores only their hashes.")
app.add_typer(keys_app, name="keys")


@keys_app.command("new")
def keys_new(name: str, families: str = typer.Option(None, help="Comma-separated families the key may use."),
             max_sessions: int = typer.Option(None, min=1, help="Live sessions the key may hold at once."),
             file: Path = typer.Option(None, help="Append the hashed entry to this keys file "
                                                  "(ENVHUB_API_KEYS_FILE)."),
             as_json: JsonOpt = False) -> None:
    """Make an API key: prints the secret once (for the client's ENVHUB_API_KEY) and its hashed entry."""
    from envhub.server.auth import new_key

    secret, key = new_key(name, families.split(",") if families else None, max_sessions)
    if file is not None:
        with file.open("a", encoding="utf-8") as f:
            f.write(key.entry() + "\n")
        file.chmod(0o600)
    if as_json:
        _print_json({"name": name, "key": secret, "entry": key.entry(), "file": str(file) if file else None})
        return
    console.print(f"key (give it to the client as ENVHUB_API_KEY; it is not stored): [bold]{secret}[/bold]")
    console.print(f"entry ({'appended to ' + str(file) if file else 'for ENVHUB_API_KEYS or a keys file'}): "
                  f"{key.entry()}", soft_wrap=True)


@import_app.command("harbor")
def import_harbor(srcs: Annotated[list[Path], typer.Argument(help="Harbor or Terminal-Bench task folders.")],
                  dest: Path = typer.Option(None, help="Tasks root (default: the hub's)."),
                  replay: str = typer.Option("local", help="How the Dockerfile's RUN steps are replayed (offline): "
                                             "local (a bubblewrap sandbox), docker (build the image on envhub's "
                                             "sandbox image) or none (files only).")) -> None:
    """Turn Harbor / Terminal-Bench task folders into envhub terminal tasks; prints every
    Dockerfile step that could not be replayed."""
    from envhub.tasks.harbor import import_harbor as do_import
    from envhub.tasks.model import Task

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
app.add_typer(ray_app, name="ray")


def _usage_error(e: Exception) -> int:
    """A mistyped command, option or value: one line naming the fix (Typer would print a
    traceback-sized panel), and the exit code 2 of a usage error."""
    if type(e).__name__ == "NoArgsIsHelpError":  # bare `envhub` or `envhub import` (Typer's or click's class)
        e.show()  # type: ignore[attr-defined]  # the help is the answer
        return getattr(e, "exit_code", 2)
    ctx = getattr(e, "ctx", None)
    hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    message = e.format_message() if hasattr(e, "format_message") else str(e)
    console.print(f"[red]error:[/red] {' '.join(message.split())}{hint}", highlight=False, soft_wrap=True)
    return getattr(e, "exit_code", 2)


def main() -> None:
    """The console script: envhub's own errors print as one clear line, not a traceback."""
    import httpx

    from envhub.errors import EnvhubError

    try:
        code = app(standalone_mode=False)  # click hands back an Exit's code instead of raising it
    except EnvhubError as e:
        console.print(f"[red]error:[/red] {e.detail}", markup=True, soft_wrap=True)
        raise SystemExit(2) from None
    except httpx.TransportError as e:  # --url / ENVHUB_URL names a server that does not answer
        try:
            where = str(e.request.url)
        except RuntimeError:  # raised before a request existed
            where = "the server"
        console.print(f"[red]error:[/red] cannot reach {where}: {e}", highlight=False, soft_wrap=True)
        raise SystemExit(2) from None
    except (typer.Exit, click.exceptions.Exit) as e:
        raise SystemExit(e.exit_code) from None
    except (typer.TyperException, click.exceptions.ClickException) as e:  # Typer vendors its own click
        raise SystemExit(_usage_error(e)) from None
    except (typer.Abort, click.exceptions.Abort):
        raise SystemExit(1) from None
    if isinstance(code, int):
        raise SystemExit(code)


if __name__ == "__main__":
    main()
