"""What the training-run pages show: the reader's runs, and one run's figures as charts and a table.

A run is its owner's (`envhub.store.runs`): the list holds the reader's own (every one for an
admin key) and says how many there are in all (an aggregate, as the episodes page does); another
reader's run is a 404, as it is on `/v1/runs/{id}`. The figures are the ones `GET /v1/runs/{id}`
answers (`RunFigures`); only the charts over time read the run's episodes again, oldest first.
"""

from __future__ import annotations

from typing import Any

from envhub.errors import NotFound
from envhub.registry import Registry
from envhub.spec import RunDetail, RunFigures, RunStep
from envhub.store import runs as store_runs
from envhub.store.stats import fmt_seconds
from envhub.store.viewer import OPERATOR, Viewer
from envhub.web import charts
from envhub.web.views import PAGE_SIZE, Paging, StoreDown, _page, _store_read

#: Why a figure the store left null (and did not say why in `unknown`) is unknown.
REASONS = {
    "trainable_share": "no episode of this run was verified",
    "episode_s_p50": "no episode of this run has ended",
    "episode_s_p99": "no episode of this run has ended",
    "reward": "no judged episode (a masked infra fault has no reward)",
    "loss": "no step report holds loss",
}
#: Step-report figures shown in the steps table, in this order (others follow by name).
STEP_COLUMNS = ("loss", "kl", "valid", "discarded", "duplicated", "trainer_wait_s")


def runs_page(registry: Registry, params: dict[str, str], viewer: Viewer) -> dict[str, Any]:
    """The reader's runs, newest first, and how many there are of everyone's."""
    page = _page(params)
    (rows, total), err = _store_read(registry, lambda s: s.runs(viewer=viewer, limit=PAGE_SIZE,
                                                                offset=(page - 1) * PAGE_SIZE), ([], 0))
    everyone, _ = _store_read(registry, lambda s: s.runs(viewer=OPERATOR, limit=1)[1], 0)
    return {"rows": rows, "paging": Paging(page=page, per=PAGE_SIZE, total=total), "filters": params,
            "everyone": everyone, "admin": viewer.admin, "store_error": err}


def run_page(registry: Registry, run_id: str, viewer: Viewer) -> dict[str, Any]:
    """One of the reader's runs (unknown to anyone else): charts, the six layers' figures, the steps."""
    def read(store: Any) -> tuple[RunDetail | None, list]:
        detail = store.run_detail(run_id, viewer=viewer)
        if detail is None:
            return None, []
        with store.sessions() as s:
            return detail, store_runs.run_timeline(s, run_id=run_id, viewer=viewer) or []

    (detail, timeline), err = _store_read(registry, read, (None, []))
    if err:
        raise StoreDown(err)
    if detail is None:
        raise NotFound(f"no run {run_id!r} in this server's store", kind="run", name=run_id)
    f = detail.figures
    staleness = [(f"{k} behind", float(v)) for k, v in (f.trainer.get("staleness") or {}).items()]
    return {"run": detail, "layers": layers(f, detail.step_reports), "steps": detail.step_reports,
            "columns": step_columns(detail.step_reports), "store_error": None,
            "charts": {
                "reward": charts.reward_by_version(
                    [(r.policy_version or "(none)", r.n, r.mean, r.ci95) for r in f.reward_by_policy],
                    label=f"run {run_id}: mean reward by policy version, 95 % CI"),
                "mix": charts.failure_mix([(c, r, fc) for c, _, r, fc in timeline],
                                          label=f"run {run_id}: failure classes over time"),
                "staleness": charts.bars(staleness, label=f"run {run_id}: trained trajectories by staleness",
                                         y_label="trajectories", empty="no step report holds staleness"),
                "throughput": charts.rate_over_time([e for _, e, _, _ in timeline if e is not None],
                                                    label=f"run {run_id}: trajectories/s over time"),
                "length": charts.bars([(b.steps, b.rate or 0.0) for b in f.success_by_length],
                                      label=f"run {run_id}: solved share by episode length (steps)",
                                      y_label="solved share", empty="no judged episode")}}


def _num(value: float | None, unit: str = "") -> str | None:
    if value is None:
        return None
    if unit == "s":
        return fmt_seconds(value)
    if unit == "%":
        return f"{value:.1%}"
    return f"{value:g}{unit}"


def layers(f: RunFigures, steps: list[RunStep]) -> list[dict[str, Any]]:
    """The figures by layer (execution, data, reward, learning, performance, economics): each row a
    (figure, shown value or None, why it is unknown)."""
    t = f.trainer
    last = next((s for s in reversed(steps) if s.figures.get("loss") is not None), None)
    latest = f.reward_by_policy[-1] if f.reward_by_policy else None
    reward = None
    if latest is not None and latest.mean is not None:
        ci = f" [{latest.ci95[0]:.3f}, {latest.ci95[1]:.3f}]" if latest.ci95 else ""
        reward = f"{latest.mean:.3f}{ci} (policy {latest.policy_version or '(none)'}, n={latest.n})"
    classes = " · ".join(f"{k} {v}" for k, v in sorted(f.failure_classes.items())) or None
    d = f.verifier_disagreement
    disagreement = None if d is None else f"{d.flipped} of {d.sampled} re-verified flipped ({d.rate:.1%})"

    def trainer(key: str, unit: str = "") -> tuple[str, str | None, str]:
        return key, _num(t.get(key), unit), f"no step report holds {key}"

    def fig(name: str, value: str | None, key: str | None = None) -> tuple[str, str | None, str]:
        key = key or name
        return name, value, f.unknown.get(key) or REASONS.get(key, "not known")

    table = {
        "execution": [("episodes", str(f.episodes), ""),
                      fig("failure classes", classes, "failure_classes"),
                      fig("trainable share", _num(f.trainable_share, "%"), "trainable_share"),
                      trainer("retried"), trainer("repaired"), trainer("dropped")],
        "data": [trainer("valid"), trainer("discarded"), trainer("duplicated"),
                 ("staleness", " · ".join(f"{k} behind: {v:g}" for k, v in (t.get("staleness") or {}).items())
                  or None, "no step report holds staleness")],
        "reward": [fig("reward, latest policy", reward, "reward"),
                   fig("anti_hack rate", _num(f.anti_hack_rate, "%"), "anti_hack_rate"),
                   fig("verifier disagreement", disagreement, "verifier_disagreement"),
                   fig("solved by length", " · ".join(f"{b.steps}: {b.solved}/{b.n}" for b in f.success_by_length)
                       or None, "reward")],
        "learning": [("steps reported", str(len(steps)), ""),
                     fig("loss, last step", None if last is None else f"{last.figures['loss']:g} (step {last.step})",
                         "loss")],
        "performance": [fig("trajectories/s", _num(f.trajectories_per_s), "trajectories_per_s"),
                        fig("episode p50", _num(f.episode_s_p50, "s"), "episode_s_p50"),
                        fig("episode p99", _num(f.episode_s_p99, "s"), "episode_s_p99"),
                        trainer("trainer_wait_s", "s")],
        "economics": [trainer("cpu_s", "s"), trainer("gpu_s", "s"),
                      fig("CPU s per solved task", _num(f.cpu_s_per_success), "cpu_s_per_success"),
                      fig("GPU s per solved task", _num(f.gpu_s_per_success), "gpu_s_per_success")],
    }
    return [{"layer": layer, "rows": [{"name": n, "value": v, "why": w} for n, v, w in rows]}
            for layer, rows in table.items()]


def step_columns(steps: list[RunStep]) -> list[str]:
    seen = {k for s in steps for k, v in s.figures.items() if not isinstance(v, dict)}
    return [c for c in STEP_COLUMNS if c in seen] + sorted(seen - set(STEP_COLUMNS))[:6]
