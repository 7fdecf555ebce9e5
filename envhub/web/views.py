"""What each page shows, assembled from the catalogue, the registry API's models and the store.

Task facts come from `Registry.task_info`/`env_info`, the same functions the JSON API uses, so a
page and `/v1/tasks/{id}` never disagree. Hidden task files (tests/, solution/) are never read
here: only `task.yaml`, `prompt.md`, the family's tool specs and the validation record.

Recorded episodes are their owners' (`envhub.store.viewer`): every page shows the aggregates
(counts, rewards, failure classes, timings, charts) of all of them, and lists, links and replays
only the reader's own (every one for an admin key); the replay of a system run's actions is an
admin's alone.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from envhub.errors import NotFound
from envhub.registry import Registry, by_calibration
from envhub.store.stats import latency_summary, percentile
from envhub.store.viewer import Viewer, is_system_run
from envhub.tasks.model import Task
from envhub.web import charts, usage

log = logging.getLogger("envhub.web")

DIFFICULTIES = ("easy", "medium", "hard")
STATUSES = ("validated", "rejected", "stale", "unvalidated")
CHECK_GROUPS = (("static", "static"), ("oracle", "oracle"), ("null", "null agent"), ("determinism", "determinism"),
                ("mutant", "mutants"), ("exploit", "exploits"), ("family", "family checks"))
PAGE_SIZE = 50
STEP_PAGE = 50


class StoreDown(Exception):
    """The episode store could not be read; pages say so instead of failing."""


@dataclass
class Paging:
    page: int
    per: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.per))

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per


def _store_read(registry: Registry, fn: Any, default: Any) -> tuple[Any, str | None]:
    if registry.store is None:
        return default, "the episode store is disabled (ENVHUB_STORE_ENABLED=false)"
    try:
        return fn(registry.store), None
    except SQLAlchemyError as e:
        log.warning("episode store read failed: %s", e)
        return default, f"the episode store cannot be read right now ({type(e).__name__})"


def group(registry: Registry, task: Task) -> str:
    """Every facet of the task (`Family.facets`), for the tasks table."""
    return " / ".join(registry.facets(task).values())


# -- pages ---------------------------------------------------------------------------------------

def index(registry: Registry, viewer: Viewer) -> dict[str, Any]:
    tasks = registry.served()
    statuses = {t.id: registry.status(t) for t in tasks}
    counts, err = _store_read(registry, lambda s: s.counts("env"), {})
    recent, _ = _store_read(registry, lambda s: s.episodes(viewer=viewer, limit=10)[0], [])
    envs = []
    for name in registry.families:
        health = Counter(statuses[t.id] for t in tasks if t.family == name)
        outcomes, _ = _store_read(registry, lambda s, n=name: s.outcomes(env=n), [])
        envs.append({"info": registry.env_info(name), "health": {s: health.get(s, 0) for s in STATUSES},
                     "episodes": counts.get(name, 0),
                     "reward_chart": charts.reward_over_time(outcomes, label=f"{name}: mean reward over time"),
                     "mix_chart": charts.failure_mix(outcomes, label=f"{name}: outcome mix over time")})
    return {"envs": envs, "recent": recent, "store_error": err, "task_total": len(tasks)}


def env_page(registry: Registry, name: str, viewer: Viewer, base_url: str = "http://127.0.0.1:8000") -> dict[str, Any]:
    info = registry.env_info(name)  # NotFound for an unknown family
    tasks = [t for t in registry.served() if t.family == name]
    example = next((t for t in sorted(tasks, key=lambda t: t.id) if registry.status(t) == "validated"),
                   min(tasks, key=lambda t: t.id, default=None))
    policies, _ = _store_read(registry, lambda s: s.by_policy(viewer=viewer, env=name), [])
    health = Counter(registry.status(t) for t in tasks)
    outcomes, err = _store_read(registry, lambda s: s.outcomes(env=name), [])
    samples, _ = _store_read(registry, lambda s: s.latency_samples(env=name), {})
    recent, _ = _store_read(registry, lambda s: s.episodes(viewer=viewer, env=name, limit=10)[0], [])
    return {"info": info, "health": {s: health.get(s, 0) for s in STATUSES}, "store_error": err,
            "recent": recent, "episodes": len(outcomes),
            "latency": latency_summary(samples, len(outcomes)) if samples else None,
            "charts": _charts(outcomes, samples, name),
            "usage": usage.snippets(base_url, name, example, info.tools[0] if info.tools else None),
            "example": example, "about": usage.about(type(registry.families[name])), "policies": _rates(policies)}


def _rates(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**r, "solve": solve_text(r["solved"], r["verified"])} for r in rows]


def solve_text(solved: int, verified: int) -> str:
    """The solve rate: passed among trainable verified episodes (masked infra faults left out)."""
    return f"{solved / verified:.0%} ({solved}/{verified})" if verified else "–"


def _charts(outcomes: list, samples: dict[str, list[float]], subject: str) -> dict[str, Any]:
    return {"reward": charts.reward_over_time(outcomes, label=f"{subject}: mean reward over time"),
            "mix": charts.failure_mix(outcomes, label=f"{subject}: outcome mix over time"),
            "latency": {op: charts.latency_histogram(samples.get(op, []), label=f"{subject}: {op} latency")
                        for op in ("reset", "step", "verify")}}


def tasks_page(registry: Registry, params: dict[str, str]) -> dict[str, Any]:
    served = registry.served()
    facets = registry.facet_labels()
    meta = {k: params[k] for k in facets if params.get(k)}
    found = registry.tasks(env=params.get("env") or None, tag=params.get("tag") or None,
                           difficulty=params.get("difficulty") or None, status=params.get("validation") or None,
                           text=params.get("q") or None, meta=meta or None)
    measured = _measured_filters(params)
    calibrations = registry.calibrations(found) if measured else {}
    if measured:
        found = by_calibration(found, calibrations, **measured)
    paging = Paging(page=_page(params), per=PAGE_SIZE, total=len(found))
    shown = found[paging.offset:paging.offset + paging.per]
    if not measured:
        calibrations = registry.calibrations(shown)
    counts, err = _store_read(registry, lambda s: s.counts("task_id"), {})
    stats, _ = _store_read(registry, lambda s: s.task_outcomes([t.id for t in shown]), {})
    rows = [{"info": registry.task_info(t, calibrations.get(t.id)), "group": group(registry, t),
             "episodes": counts.get(t.id, 0),
             "solve": solve_text(stats[t.id]["solved"], stats[t.id]["verified"]) if t.id in stats else "–",
             "verify_p50": percentile(stats[t.id]["verify_s"], 50) if t.id in stats else None}
            for t in shown]
    options = {k: sorted({v for t in served if (v := registry.facets(t).get(k))}) for k in facets}
    return {"rows": rows, "paging": paging, "filters": params, "families": list(registry.families),
            "meta_filters": facets, "options": options, "difficulties": DIFFICULTIES, "statuses": STATUSES,
            "store_error": err}


def _measured_filters(params: dict[str, str]) -> dict[str, Any]:
    """The tasks page's filters on measured difficulty (`/v1/tasks`' `calibrated`, `pass_at_k_min`,
    `pass_at_k_max`); a value that does not parse is ignored."""
    out: dict[str, Any] = {}
    if params.get("calibrated") in ("yes", "no"):
        out["calibrated"] = params["calibrated"] == "yes"
    for key in ("pass_at_k_min", "pass_at_k_max"):
        try:
            value = float(params.get(key) or "")
        except ValueError:
            continue
        if 0.0 <= value <= 1.0:
            out[key] = value
    return out


def task_page(registry: Registry, task_id: str, viewer: Viewer) -> dict[str, Any]:
    task = registry.catalog.get(task_id)
    if task.family not in registry.families:
        raise NotFound(f"task {task_id!r} belongs to {task.family!r}, which this server does not serve")
    info = registry.task_info(task, registry.calibrations([task]).get(task.id))
    record = {k: v for k, v in (task.validation_record() or {}).items() if k != "key"}
    outcomes, err = _store_read(registry, lambda s: s.outcomes(task_id=task.id), [])
    samples, _ = _store_read(registry, lambda s: s.latency_samples(task_id=task.id), {})
    recent, _ = _store_read(registry, lambda s: s.episodes(viewer=viewer, task_id=task.id, limit=20)[0], [])
    by_harness, _ = _store_read(registry, lambda s: s.by_harness(task_id=task.id), {})
    policies, _ = _store_read(registry, lambda s: s.by_policy(viewer=viewer, task_id=task.id), [])
    return {"policies": _rates(policies), "info": info, "by_harness": by_harness, "task": task,
            "tools": registry.families[task.family].task_tool_specs(task),
            "limits": task.config.limits.model_dump(), "record": record, "groups": check_groups(record),
            "flake": oracle_flake(record), "latency": latency_summary(samples, len(outcomes)),
            "recent": recent, "episodes": len(outcomes), "store_error": err,
            "charts": _charts(outcomes, samples, task.id)}


def check_groups(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The validation record's checks by kind: oracle runs, null agent, determinism, mutants, exploits…"""
    checks: dict[str, bool] = record.get("checks") or {}
    out = []
    for prefix, label in CHECK_GROUPS:
        items = {k: v for k, v in checks.items() if k == prefix or k.startswith(prefix + ":")}
        if items:
            out.append({"label": label, "passed": sum(bool(v) for v in items.values()), "total": len(items),
                        "checks": [(k.split(":", 1)[1] if ":" in k else k, bool(v)) for k, v in sorted(items.items())]})
    known = {p for p, _ in CHECK_GROUPS}
    other = {k: v for k, v in checks.items() if k.split(":", 1)[0] not in known}
    if other:
        out.append({"label": "other", "passed": sum(bool(v) for v in other.values()), "total": len(other),
                    "checks": sorted((k, bool(v)) for k, v in other.items())})
    return out


def oracle_flake(record: dict[str, Any]) -> dict[str, Any] | None:
    """How often the oracle fell short of the maximum reward across validation runs."""
    rewards = record.get("oracle_rewards")
    if not rewards:
        return None
    short = sum(1 for r in rewards if r is None or r < 1.0)
    return {"short": short, "runs": len(rewards), "rate": short / len(rewards)}


def episodes_page(registry: Registry, params: dict[str, str], viewer: Viewer) -> dict[str, Any]:
    """The reader's episodes, and how many there are of everyone's (an aggregate)."""
    page = _page(params)
    filters = {"env": params.get("env") or None, "task_id": params.get("task") or None,
               "failure_class": params.get("outcome") or None, "run_id": params.get("run") or None}
    (rows, total), err = _store_read(registry, lambda s: s.episodes(
        viewer=viewer, **filters, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE), ([], 0))
    everyone, _ = _store_read(registry, lambda s: s.total(env=filters["env"], task_id=filters["task_id"]), 0)
    return {"rows": rows, "paging": Paging(page=page, per=PAGE_SIZE, total=total), "filters": params,
            "families": list(registry.families), "outcomes": charts.OUTCOMES, "store_error": err,
            "everyone": everyone, "admin": viewer.admin}


def episode_page(registry: Registry, episode_id: str, params: dict[str, str], viewer: Viewer) -> dict[str, Any]:
    """One of the reader's episodes (unknown to anyone else), its trajectory unless it is a system
    run's and the reader no admin."""
    detail, err = _store_read(registry, lambda s: s.episode(episode_id, viewer=viewer), None)
    if err:
        raise StoreDown(err)
    if detail is None:
        raise NotFound(f"no recorded episode {episode_id!r}", kind="episode", name=episode_id)
    total = detail.step_count
    wanted_step = _int(params.get("step"), 0)
    page = (wanted_step - 1) // STEP_PAGE + 1 if wanted_step > 0 else _page(params)
    (steps, total), _ = _store_read(registry, lambda s: s.steps(
        episode_id, viewer=viewer, offset=(page - 1) * STEP_PAGE, limit=STEP_PAGE), ([], total))
    task = registry.catalog.tasks.get(detail.task_id)
    return {"ep": detail, "steps": steps, "paging": Paging(page=page, per=STEP_PAGE, total=total),
            "actions_hidden": is_system_run(detail.policy_version) and not viewer.admin,
            "task_known": task is not None, "prompt": task.prompt if task else None,
            "timings": timing_rows(detail.reset_s, detail.verify_s, detail.timings), "store_error": None}


#: Verify's parts, in the order they happen (anything else recorded follows with its key as the label).
TIMING_LABELS = {"export_s": "export state", "verify_s": "run verifier"}


def timing_rows(reset_s: float | None, verify_s: float | None, timings: dict[str, Any]) -> list[tuple[str, Any]]:
    """Readable labels, no raw keys: reset, verify (total), then what verify spent its time on."""
    rows: list[tuple[str, Any]] = [("reset", reset_s), ("verify", verify_s)]
    parts = {**{k: timings[k] for k in TIMING_LABELS if k in timings},
             **{k: v for k, v in timings.items() if k not in TIMING_LABELS and k != "total_s"}}
    return rows + [(TIMING_LABELS.get(k) or k.removesuffix("_s").replace("_", " "), v) for k, v in parts.items()]


def _int(value: str | None, default: int) -> int:
    try:
        return int(str(value))
    except ValueError:
        return default


def _page(params: dict[str, str]) -> int:
    return min(max(1, _int(params.get("page"), 1)), 1_000_000)
