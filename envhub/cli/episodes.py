"""`envhub episodes`, `run` and `smoke`: recorded episodes, and episodes driven through the HTTP API."""

from __future__ import annotations

import contextlib
import json
import random
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from envhub.cli._shared import (
    JsonOpt,
    app,
    check_env,
    console,
    fitted_table,
    local_server,
    log_line,
    print_json,
    print_timings,
    progress_bar,
    timings_by_group,
)
from envhub.config import get_settings
from envhub.records import validation_status


@app.command()
def episodes(task: str = typer.Option(None, "--task", help="Only this task."),
             env: str = typer.Option(None, "--env", help="Only this family."),
             outcome: str = typer.Option(None, help="Only this failure class (or 'unverified')."),
             policy: str = typer.Option(None, "--policy", help="Only this policy version."),
             harness: str = typer.Option(None, "--harness", help="Only this harness."),
             limit: int = typer.Option(50, min=1, max=10_000), as_json: JsonOpt = False) -> None:
    """Recorded episodes, newest first (from the episode store: read as its operator, every owner's)."""
    from envhub.store import OPERATOR, EpisodeStore
    from envhub.store.stats import fmt_seconds

    check_env(env)
    settings = get_settings()
    store = EpisodeStore(settings.store_url)
    try:
        rows, total = store.episodes(viewer=OPERATOR, env=env, task_id=task, failure_class=outcome,
                                     policy_version=policy, harness=harness, limit=limit)
    finally:
        store.engine.dispose()
    if as_json:
        print_json({"total": total, "episodes": [r.model_dump(mode="json") for r in rows]})
        return
    cells = []
    for r in rows:
        colour = "green" if r.outcome == "ok" else "dim" if r.outcome == "unverified" else "red"
        cells.append({"started": r.created_at.strftime("%Y-%m-%d %H:%M:%S"), "id": r.id, "task": r.task_id,
                      "harness": r.harness, "policy": r.policy_version or "-", "steps": str(r.step_count),
                      "reward": "-" if r.reward is None else f"{r.reward:.3g}",
                      "outcome": f"[{colour}]{r.outcome}[/{colour}]", "verify": fmt_seconds(r.verify_s)})
    table = fitted_table(f"{len(rows)} of {total} episodes" + (f" of {task}" if task else ""), cells,
                          ["started", "id", "task", "harness", "policy", "steps", "reward", "outcome", "verify"],
                          spare=["harness", "verify", "steps", "policy", "started"], flex=["policy"],
                          right=("steps", "reward", "verify"))
    table.caption = f"store: {settings.store_label()}"
    console.print(table)



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
    from envhub.store.viewer import ORACLE_POLICY
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
        base = url or stack.enter_context(local_server(settings))
        # An oracle's actions are the task's solution: recorded as a system run, whose actions only
        # admins may read (envhub.store.viewer).
        policy = ORACLE_POLICY if agent == "oracle" else None
        with EnvClient(base) as client, client.session(task.family, task_id=task.id, policy_version=policy) as session:
            steps = [session.step(a) for a in actions]
            result = session.verify()
    if as_json:
        print_json({"task_id": task.id, "agent": agent, "steps": len(steps), **result.model_dump(mode="json")})
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

    check_env(env)
    settings = get_settings()
    catalog = Catalog(settings.tasks_dir)
    tasks = [catalog.get(t) for t in task_ids] if task_ids else catalog.filter(env=env)
    rows: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        needed = sorted({t.family for t in tasks})
        base = url or stack.enter_context(
            local_server(settings.model_copy(update={"families": needed, "store_enabled": False})))
        client = stack.enter_context(EnvClient(base))
        if per_family:
            tasks = _draw(client, tasks, per_family, seed, as_json)
            needed = sorted({t.family for t in tasks})
        loaded = families.load(needed)
        skins = {fam: _skins_for(client, fam, harness) for fam in needed}
        with progress_bar(quiet=as_json) as progress:
            bar = progress.add_task("episodes", total=2 * sum(len(skins[t.family]) for t in tasks))
            for task in tasks:
                for skin in skins[task.family]:
                    for agent in ("oracle", "noop"):
                        progress.update(bar, description=f"{task.id} {agent} ({skin})")
                        rows.append(_smoke_episode(client, task, agent, loaded[task.family], skin))
                        progress.advance(bar)
                        r = rows[-1]
                        log_line(progress, as_json, f"{task.id} {agent} ({skin}): reward {r['reward']:g} "
                                                     f"{'ok' if r['ok'] else 'BAD'} in {r['seconds']:.1f} s")
    bad = [r for r in rows if not r["ok"]]
    timings = timings_by_group([(catalog.get(r["task_id"]), r["seconds"]) for r in rows])
    if as_json:
        print_json({"episodes": rows, "failed": len(bad), "timings": timings})
    else:
        table = Table("task", "agent", "harness", "reward", "failure class", "want", "s", "", title=f"{len(rows)} "
                      f"episodes through {url or 'an in-process server'}: {len(rows) - len(bad)} as expected")
        for r in rows:
            table.add_row(r["task_id"], r["agent"], r["harness"], f"{r['reward']:g}", r["failure_class"], r["want"],
                          f"{r['seconds']:.1f}", "[green]ok[/green]" if r["ok"] else f"[red]BAD[/red] {r['detail']}")
        console.print(table)
        print_timings(timings, "episode time per family (SWE: per language)", "episodes")
    if bad:
        raise typer.Exit(1)



def _draw(client: Any, tasks: list, per_family: int, seed: int, quiet: bool) -> list:
    """A seeded draw of `per_family` validated tasks per family among those the server can run: a
    pool whose replica lacks a toolchain or a factory task's source serves that task as unavailable
    (with the command that fixes it), which says nothing of the task; the skipped are counted."""
    by_family: dict[str, list] = {}
    for t in tasks:
        if validation_status(t) == "validated":
            by_family.setdefault(t.family, []).append(t)
    rng = random.Random(seed)
    out = []
    for fam in sorted(by_family):
        served = {t["id"]: t.get("unavailable") for t in client.tasks(env=fam, limit=5000)}
        runnable = [t for t in by_family[fam] if t.id in served and served[t.id] is None]
        if len(runnable) < len(by_family[fam]) and not quiet:
            console.print(f"{fam}: {len(by_family[fam]) - len(runnable)} of {len(by_family[fam])} validated tasks "
                          "cannot run on this server (unavailable or not served); drawn from the rest")
        out += rng.sample(runnable, min(per_family, len(runnable)))
    return out


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
    from envhub.store.viewer import SYSTEM_POLICY_PREFIX
    from envhub.validate.core import deserved

    started = time.monotonic()
    want_pass = agent == "oracle" or task.config.null_expected == "pass"
    row = {"task_id": task.id, "agent": agent, "harness": harness, "want": "pass" if want_pass else "fail",
           "reward": 0.0, "failure_class": "", "detail": "", "ok": False}
    try:
        skin = skins.make(harness)
        actions = [c for a in family.oracle_actions(task) for c in skin.express(a, {})] if agent == "oracle" else []
        # A system run (envhub.store.viewer): a server with a store keeps the oracle's actions for admins only.
        policy = SYSTEM_POLICY_PREFIX + agent
        with client.session(task.family, task_id=task.id, harness=harness, policy_version=policy) as session:
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
