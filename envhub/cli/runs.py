"""`envhub runs` and `envhub runs show ID`: training runs in the episode store, read as its operator
(every owner's), with the figures the hub serves at `/v1/runs/{id}`."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from envhub.cli._shared import JsonOpt, app, console, fitted_table, print_json
from envhub.config import get_settings

runs_app = typer.Typer(help="Training runs (envhub.rl reports them): their steps and figures.")
app.add_typer(runs_app, name="runs")


def _store() -> Any:
    from envhub.store import EpisodeStore

    return EpisodeStore(get_settings().store_url)


@runs_app.callback(invoke_without_command=True)
def runs(ctx: typer.Context, limit: int = typer.Option(50, min=1, max=10_000), as_json: JsonOpt = False) -> None:
    """Recorded training runs, newest first."""
    if ctx.invoked_subcommand is not None:
        return
    from envhub.store import OPERATOR

    store = _store()
    try:
        rows, total = store.runs(viewer=OPERATOR, limit=limit)
    finally:
        store.engine.dispose()
    if as_json:
        print_json({"total": total, "runs": [r.model_dump(mode="json", exclude={"protocol"}) for r in rows]})
        return
    cells = [{"created": r.created_at.strftime("%Y-%m-%d %H:%M:%S"), "id": r.id, "steps": str(r.steps),
              "config": ", ".join(f"{k}={v}" for k, v in r.config.items()) or "-"} for r in rows]
    table = fitted_table(f"{len(rows)} of {total} runs", cells, ["created", "id", "steps", "config"],
                         spare=["config", "created"], flex=["config"], right=("steps",))
    table.caption = f"store: {get_settings().store_label()}"
    console.print(table)


@runs_app.command("show")
def show(run_id: str, as_json: JsonOpt = False) -> None:
    """One run: its figures (from its episodes and its trainer's reports) and its steps."""
    from envhub.errors import NotFound
    from envhub.store import OPERATOR

    store = _store()
    try:
        run = store.run_detail(run_id, viewer=OPERATOR)
    finally:
        store.engine.dispose()
    if run is None:
        raise NotFound(f"no run {run_id!r} in the store {get_settings().store_label()}")
    if as_json:
        print_json(run.model_dump(mode="json", exclude={"protocol"}))
        return
    f = run.figures
    figures = Table("figure", "value", title=f"run {run.id}: {f.episodes} episodes, {run.steps} steps reported")
    for name, value in _figure_rows(f):
        figures.add_row(name, value)
    console.print(figures)
    if f.reward_by_policy:
        rewards = Table("policy", "episodes", "mean reward", "95 % CI", title="reward by policy version")
        for r in f.reward_by_policy:
            ci = "-" if r.ci95 is None else f"[{r.ci95[0]:.3f}, {r.ci95[1]:.3f}]"
            rewards.add_row(r.policy_version or "-", str(r.n), f"{r.mean:.3f}", ci)
        console.print(rewards)
    if run.step_reports:
        keys = sorted({k for s in run.step_reports for k, v in s.figures.items() if not isinstance(v, dict)})
        steps = Table("step", "policy", *keys, title="trainer steps")
        for s in run.step_reports:
            steps.add_row(str(s.step), s.policy_version or "-", *(_num(s.figures.get(k)) for k in keys))
        console.print(steps)


def _figure_rows(f: Any) -> list[tuple[str, str]]:
    """The run's figures as (name, text), a null one with why it is unknown."""
    def why(name: str, value: Any) -> str:
        return _num(value) if value is not None else f"[dim]- ({f.unknown.get(name, 'no data')})[/dim]"

    rows = [("failure classes", ", ".join(f"{k} {v}" for k, v in sorted(f.failure_classes.items())) or "-"),
            ("trainable share", why("trainable_share", f.trainable_share)),
            ("anti_hack rate", why("anti_hack_rate", f.anti_hack_rate)),
            ("verifier disagreement", why("verifier_disagreement", None) if f.verifier_disagreement is None else
             f"{f.verifier_disagreement.flipped} of {f.verifier_disagreement.sampled} re-verified flipped "
             f"({f.verifier_disagreement.rate:.1%})"),
            ("trajectories/s", why("trajectories_per_s", f.trajectories_per_s)),
            ("episode s p50 / p99", f"{_num(f.episode_s_p50)} / {_num(f.episode_s_p99)}"),
            ("solved by length (steps)",
             ", ".join(f"{b.steps}: {b.solved}/{b.n}" for b in f.success_by_length) or "-"),
            ("CPU s per success", why("cpu_s_per_success", f.cpu_s_per_success)),
            ("GPU s per success", why("gpu_s_per_success", f.gpu_s_per_success))]
    for key, value in f.trainer.items():
        text = ", ".join(f"{k}: {_num(v)}" for k, v in value.items()) if isinstance(value, dict) else _num(value)
        rows.append((f"trainer {key}", text))
    return rows


def _num(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
