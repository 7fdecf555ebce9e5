"""`envhub validate`: judge tasks, check records, run the constant-policy baselines."""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from envhub.cli._shared import (
    JsonOpt,
    app,
    check_env,
    console,
    log_line,
    make_hub,
    missing_here,
    print_json,
    print_timings,
    progress_bar,
    status_style,
    timings_by_group,
)
from envhub.config import Settings, get_settings
from envhub.errors import EnvhubError
from envhub.records import validation_status


@app.command()
def validate(task_ids: Annotated[list[str], typer.Argument(help="Tasks to validate (default: all).")] = None,  # type: ignore
             env: str = typer.Option(None, help="Only this family."),
             runs: int = typer.Option(3, help="Oracle runs per task."),
             sample: int = typer.Option(0, help="Validate a random sample of this many tasks."),
             seed: int = typer.Option(0, help="Seed for --sample."),
             budget_s: float = typer.Option(0.0, "--budget-s",
                                            help="With --sample: draw tasks while their recorded validation "
                                                 "times add up to at most this many seconds (0: no bound); "
                                                 "a task that alone takes more is left to a full run."),
             check_records: bool = typer.Option(False, "--check-records",
                                                help="Only check that every record is present, fresh and validated."),
             write: bool = typer.Option(True, help="Write validation.json records."),
             resume: bool = typer.Option(False, "--resume",
                                         help="Skip tasks whose record is fresh (each record is written as its "
                                              "task finishes, so an interrupted run goes on where it stopped)."),
             jobs: int = typer.Option(min(2, os.cpu_count() or 1), min=1,
                                      help="Tasks validated (with --baselines: episodes played) at once (default: 2, "
                                           "or 1 on a one-core machine)."),
             baselines: bool = typer.Option(False, "--baselines",
                                            help="Only run the constant-policy baselines (mean reward per policy "
                                                 "and family; each must be at most 0.02)."),
             known_over: list[str] = typer.Option([], "--known-over",
                                                  help="With --baselines: a policy known to exceed the target "
                                                       "(shown, not failed)."),
             by_template: bool = typer.Option(False, "--by-template",
                                              help="With --baselines: per generator template, adding each "
                                                   "template's constant answers and a sibling's answer."),
             siblings: int = typer.Option(3, min=1,
                                          help="With --by-template: siblings whose answer and whole oracle each "
                                               "task is played with (more: a finer estimate of a rare hit)."),
             as_json: JsonOpt = False, report: Path = typer.Option(None, help="Write the JSON report here.")) -> None:
    """Validate tasks: static, oracle, null, determinism, mutants, exploits, family checks."""
    from envhub.tasks.catalog import Catalog

    check_env(env)
    settings = get_settings()
    catalog = Catalog(settings.tasks_dir)
    tasks = [catalog.get(t) for t in task_ids] if task_ids else catalog.filter(env=env)
    if check_records:
        _check_records(catalog, tasks, as_json)
        return
    if baselines:
        if sample:
            tasks = random.Random(seed).sample(tasks, min(sample, len(tasks)))
        _baselines(settings, tasks, as_json, report, set(known_over), by_template, siblings, jobs)
        return
    if sample:  # re-check that records tell the truth: draw from the tasks recorded as validated
        recorded = [t for t in tasks if validation_status(t) == "validated"]
        tasks = _draw(recorded, sample, seed, budget_s)
    if resume:
        done = [t for t in tasks if validation_status(t) in ("validated", "rejected")]
        tasks = [t for t in tasks if t not in done]
        if not as_json:
            console.print(f"resuming: {len(done)} tasks have a fresh record, {len(tasks)} to validate")
    # A task this machine cannot run is not judged (a missing toolchain is no verdict on the task).
    from envhub import families

    loaded = families.load(sorted({t.family for t in tasks} & set(families.available())))
    lacking = {t.id: m for t in tasks if (m := missing_here(loaded, t))}
    tasks = [t for t in tasks if t.id not in lacking]
    reports = asyncio.run(_validate(settings, tasks, runs, write, quiet=as_json, jobs=jobs))
    broken = [{"task_folder": str(p), "status": "rejected", "detail": e.detail} for p, e in catalog.errors.items()
              if not env or f"/{env}/" in str(p)]
    data = {"tasks": [r.as_dict() for r in reports], "broken_folders": broken,
            "validated": sum(r.status == "validated" for r in reports),
            "rejected": sum(r.status == "rejected" for r in reports) + len(broken),
            "timings": timings_by_group([(catalog.get(r.task_id), r.seconds) for r in reports]),
            "unavailable": [{"task": task_id, **m} for task_id, m in lacking.items()]}
    if report:
        report.write_text(json.dumps(data, indent=2))
    if as_json:
        print_json(data)
    else:
        table = Table(title=f"validation: {data['validated']} validated, {data['rejected']} rejected")
        for col in ("task", "static", "oracle", "null", "determinism", "mutants", "exploits", "family", "s", "status"):
            table.add_column(col)
        for r in reports:
            table.add_row(r.task_id, r.summary("static"), r.summary("oracle"), r.summary("null"),
                          r.summary("determinism"), r.summary("mutant"), r.summary("exploit"), r.summary("family"),
                          f"{r.seconds:.1f}", status_style(r.status))
        console.print(table)
        print_timings(data["timings"], "validation time per family (SWE: per language)", "tasks")
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


def _draw(tasks: list, n: int, seed: int, budget_s: float) -> list:
    """`n` of `tasks` drawn by `seed`; with a budget, those of the drawn order whose recorded
    validation times (`seconds` in the record) still fit in it: a day's draw costs about the same
    whichever tasks it meets, so a slow task does not stretch CI past its limit."""
    if not budget_s:
        return random.Random(seed).sample(tasks, min(n, len(tasks)))
    picked, spent = [], 0.0
    for task in random.Random(seed).sample(tasks, len(tasks)):
        cost = float((task.validation_record() or {}).get("seconds") or 0.0)
        if spent + cost <= budget_s:
            picked.append(task)
            spent += cost
            if len(picked) == n:
                break
    return picked


def _check_records(catalog: Any, tasks: list, as_json: bool) -> None:
    """Fail on stale or rejected records and broken folders; unvalidated tasks are listed, and
    served as unvalidated (the registry says so), until `envhub validate` has judged them."""
    rows = [{"id": t.id, "status": validation_status(t)} for t in tasks]
    bad = [r for r in rows if r["status"] in ("stale", "rejected")]
    counts = {s: sum(r["status"] == s for r in rows) for s in ("validated", "unvalidated", "stale", "rejected")}
    if as_json:
        print_json({"checked": len(rows), **counts, "failing": bad})
    else:
        console.print(f"{len(rows)} records checked: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
        for r in bad:
            console.print(f"  [red]{r['id']}[/red]: {r['status']}")
    if bad or catalog.errors:
        raise typer.Exit(1)


def _baselines(settings: Settings, tasks: list, as_json: bool, report: Path | None, known_over: set[str],
               by_template: bool = False, siblings: int = 3, jobs: int = 1) -> None:
    """`validate --baselines`: every constant policy on every task, mean reward per policy and family
    (`--by-template`: per generator template, with each template's constant answers and siblings')."""
    from envhub.validate import baselines as bl

    learned_from: dict[tuple[str, str], str] = {}

    async def run() -> list:
        hub = make_hub(settings.model_copy(update={"families": sorted({t.family for t in tasks}),
                                                "store_enabled": False}))
        await hub.start()
        plays = [(task, name, policy) for task in tasks for name, policy in bl.POLICIES.items()]
        if by_template:
            oracles: dict[str, list | None] = {}  # read once a task: answers, sources and replays all use it

            def actions_of(task: Any) -> list | None:
                if task.id not in oracles:
                    try:
                        oracles[task.id] = hub.families[task.family].oracle_actions(task)
                    except EnvhubError:
                        oracles[task.id] = None
                return oracles[task.id]

            def answer_of(task: Any) -> str | None:
                actions = actions_of(task)
                answer = bl.submitted(actions) if actions is not None else None
                return answer if answer is not None else bl.written(task)
            plays += bl.template_policies(tasks, answer_of, siblings=siblings, actions_of=actions_of)
            learned_from.update(bl.sources(tasks, answer_of))
        done: list[Any] = [None] * len(plays)  # in the plays' order, whatever order they finish in
        gate = asyncio.Semaphore(jobs)
        try:
            with progress_bar(quiet=as_json) as progress:
                bar = progress.add_task("baselines", total=len(plays))

                async def play(i: int, task: Any, name: str, policy: Any) -> None:
                    async with gate:
                        progress.update(bar, description=f"{task.id} {name}")
                        done[i] = o = await bl.run_policy(hub.manager, task, name, policy)
                    progress.advance(bar)
                    if o is not None:
                        log_line(progress, as_json, f"{task.id} {name}: reward {o.reward:g} {o.failure_class}")
                await asyncio.gather(*(play(i, *p) for i, p in enumerate(plays)))
        finally:
            await hub.stop()
        return [o for o in done if o is not None]

    outcomes = asyncio.run(run())
    rows = bl.by_template(outcomes, learned_from) if by_template else bl.summarize(outcomes)
    data = {"target": bl.TARGET, "tasks": len(tasks), "baselines": rows,
            "episodes": [vars(o) for o in outcomes]}
    if report:
        report.write_text(json.dumps(data, indent=2))
    if as_json:
        print_json({k: v for k, v in data.items() if k != "episodes"})
    elif by_template:
        table = Table("template", "policy", "tasks", "judged", "mean reward", "",
                      title=f"constant-policy baselines per template over {len(tasks)} tasks (target: mean <= "
                            f"{bl.TARGET}; answer: the template's best constant answer, held out from the task "
                            f"it came from; sibling: another task's; replay: another task's whole oracle)")
        for r in rows:
            policy = f"answer {r['answer']!r}" if r["policy"] == "answer" else r["policy"]
            table.add_row(r["template"], policy, str(r["tasks"]), str(r["judged"]), f"{r['mean_reward']:.4f}",
                          "[green]ok[/green]" if r["ok"] else "[red]over[/red]")
        console.print(table)
        over = sorted({r["template"] for r in rows if not r["ok"]})
        console.print(f"{len(over)} of {len({r['template'] for r in rows})} templates have a policy over the target")
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
    """`validate_tasks` behind a progress bar, a line per finished task."""
    from envhub.validate.core import validate_tasks

    with progress_bar(quiet=quiet) as progress:
        bar = progress.add_task("validating", total=len(tasks))

        def done(report: Any) -> None:
            progress.advance(bar)
            log_line(progress, quiet, f"{report.task_id}: {report.status} in {report.seconds:.1f} s")

        return await validate_tasks(settings, tasks, runs=runs, write=write, jobs=jobs,
                                    on_start=lambda task: progress.update(bar, description=task.id), on_done=done)
