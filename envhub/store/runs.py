"""Training runs in the store: keyword-only reads and writes, and the figures of a run.

A run (`RunRow`) is its reporter's, as an episode is (`envhub.store.viewer`): its owner and an
admin read it, anyone else is told it does not exist. Its episodes are its owner's episodes whose
reset named its id, so no other caller can put episodes into someone's figures. The figures are
computed here, from those episodes and the trainer's step reports, in one pass over plain rows.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from envhub.errors import Conflict
from envhub.spec import LengthBucket, RewardByPolicy, RunFigures, VerifierDisagreement
from envhub.store.models import CheckRow, EpisodeRow, RunRow, RunStepRow
from envhub.store.repo import utc
from envhub.store.stats import percentile
from envhub.store.viewer import Viewer

#: Failure classes a reward is judged for (the masked infra faults carry none).
JUDGED = ("ok", "agent_error", "agent_timeout")
#: Step-report figures that count things: a run's total is their sum over its steps.
COUNTERS = ("valid", "discarded", "duplicated", "retried", "repaired", "dropped", "trainer_wait_s", "cpu_s", "gpu_s")
#: Two-sided 95 % Student's t quantiles by degrees of freedom (1..30); 1.96 beyond.
T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
       2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def create_run(session: Session, *, owner: str | None, run_id: str | None, config: dict[str, Any]) -> RunRow:
    """The run `run_id` of `owner`, made now unless it exists (a retried create); `Conflict` when
    the id is another owner's."""
    run_id = run_id or uuid.uuid4().hex
    existing = session.get(RunRow, run_id)
    if existing is None:
        existing = RunRow(id=run_id, owner=owner, created_at=datetime.now(UTC), config=config)
        session.add(existing)
        try:
            session.commit()
        except IntegrityError:  # made by a concurrent create meanwhile: judge that one
            session.rollback()
            existing = session.get(RunRow, run_id)
            assert existing is not None
    if existing.owner != owner:
        raise Conflict(f"the run id {run_id!r} is taken: choose another (or omit it for a random one)")
    return existing


def get_run(session: Session, *, run_id: str, viewer: Viewer) -> RunRow | None:
    """The run, or None when there is none `viewer` may read."""
    row = session.get(RunRow, run_id)
    return row if row is not None and viewer.may_read(row.owner) else None


def report_step(session: Session, *, run: RunRow, step: int, policy_version: str | None,
                figures: dict[str, Any]) -> RunStepRow:
    """Record (or replace: a retried report) one step's figures."""
    row = session.get(RunStepRow, (run.id, step))
    now = datetime.now(UTC)
    if row is None:
        row = RunStepRow(run_id=run.id, step=step, policy_version=policy_version, reported_at=now, figures=figures)
        session.add(row)
    else:
        row.policy_version, row.reported_at, row.figures = policy_version, now, figures
    try:
        session.commit()
    except IntegrityError:  # a concurrent report of the same step won: this one replaces it
        session.rollback()
        row = session.get(RunStepRow, (run.id, step))
        assert row is not None
        row.policy_version, row.reported_at, row.figures = policy_version, now, figures
        session.commit()
    return row


def list_runs(session: Session, *, viewer: Viewer, limit: int = 50,
              offset: int = 0) -> tuple[list[tuple[RunRow, int]], int]:
    """(run, steps reported) of the runs `viewer` may read, newest first, and how many there are."""
    mine = viewer.may_read_rows(RunRow.owner)
    total = session.scalar(select(func.count()).select_from(RunRow).where(mine)) or 0
    counts = (select(RunStepRow.run_id, func.count().label("n")).group_by(RunStepRow.run_id).subquery())
    stmt = select(RunRow, func.coalesce(counts.c.n, 0)).outerjoin(counts, counts.c.run_id == RunRow.id).where(mine)
    rows = session.execute(stmt.order_by(RunRow.created_at.desc(), RunRow.id).limit(limit).offset(offset)).all()
    return [(r, int(n)) for r, n in rows], total


def run_steps(session: Session, *, run_id: str) -> list[RunStepRow]:
    return list(session.scalars(select(RunStepRow).where(RunStepRow.run_id == run_id).order_by(RunStepRow.step)))


def _mine(run: RunRow) -> tuple[Any, Any]:
    """The run's episodes: its owner's that carry its id."""
    return (EpisodeRow.run_id == run.id,
            EpisodeRow.owner.is_(None) if run.owner is None else EpisodeRow.owner == run.owner)


def run_timeline(session: Session, *, run_id: str, viewer: Viewer,
                 limit: int = 20_000) -> list[tuple[datetime, datetime | None, float | None, str | None]] | None:
    """(created_at, ended_at, reward, failure_class) of the run's episodes, oldest first, for the
    run page's charts over time; None when there is no run `viewer` may read."""
    run = get_run(session, run_id=run_id, viewer=viewer)
    if run is None:
        return None
    rows = session.execute(select(EpisodeRow.created_at, EpisodeRow.ended_at, EpisodeRow.reward,
                                  EpisodeRow.failure_class).where(*_mine(run))
                           .order_by(EpisodeRow.created_at.desc()).limit(limit)).all()
    return [(utc(c), utc(e), r, f) for c, e, r, f in reversed(rows)]  # type: ignore[misc]


def run_figures(session: Session, *, run: RunRow, steps: list[RunStepRow]) -> RunFigures:
    """The run's figures from its owner's episodes that carry its id and from its step reports."""
    mine = _mine(run)
    episodes = session.execute(select(EpisodeRow.id, EpisodeRow.policy_version, EpisodeRow.created_at,
                                      EpisodeRow.ended_at, EpisodeRow.step_count, EpisodeRow.reward,
                                      EpisodeRow.passed, EpisodeRow.failure_class, EpisodeRow.trainable,
                                      EpisodeRow.timings, EpisodeRow.reverify).where(*mine)).all()
    checked = set(session.scalars(select(CheckRow.episode_id).join(EpisodeRow, EpisodeRow.id == CheckRow.episode_id)
                                  .where(*mine).distinct()))
    hacked = set(session.scalars(select(CheckRow.episode_id).join(EpisodeRow, EpisodeRow.id == CheckRow.episode_id)
                                 .where(*mine, CheckRow.kind == "anti_hack", CheckRow.passed.is_(False)).distinct()))
    return figures_of(episodes, checked, hacked, [s.figures or {} for s in steps])


def figures_of(episodes: list[Any], checked: set[str], hacked: set[str],
               reports: list[dict[str, Any]]) -> RunFigures:
    """The figures of a run from plain rows (see `run_figures`); a pure function."""
    unknown: dict[str, str] = {}
    classes = Counter(e.failure_class or "unverified" for e in episodes)
    verified = [e for e in episodes if e.failure_class is not None]
    judged = [e for e in verified if e.failure_class in JUDGED and e.reward is not None]
    by_policy: dict[str | None, list[float]] = {}
    for e in judged:
        by_policy.setdefault(e.policy_version, []).append(float(e.reward))
    rewards = [_reward_row(p, rs) for p, rs in sorted(by_policy.items(), key=lambda kv: _version_key(kv[0]))]
    trainable_share = _share(sum(1 for e in verified if e.trainable), len(verified))
    anti_hack_rate = _share(len(hacked), len(checked))
    if not checked:
        unknown["anti_hack_rate"] = "no episode of this run has recorded checks"
    ended = [e for e in episodes if e.ended_at is not None]
    durations = [(utc(e.ended_at) - utc(e.created_at)).total_seconds() for e in ended]
    per_s = None
    if len(ended) >= 2:
        span = (max(utc(e.ended_at) for e in ended) - min(utc(e.created_at) for e in ended)).total_seconds()
        per_s = round(len(ended) / span, 4) if span > 0 else None
    else:
        unknown["trajectories_per_s"] = "fewer than two ended episodes"
    trainer = _trainer_totals(reports)
    solved = sum(1 for e in judged if e.passed)
    cpu = _per_success("cpu_s", trainer, episodes, solved, unknown)
    gpu = _per_success("gpu_s", trainer, episodes, solved, unknown)
    return RunFigures(episodes=len(episodes), reward_by_policy=rewards, failure_classes=dict(classes),
                      trainable_share=trainable_share, anti_hack_rate=anti_hack_rate, trajectories_per_s=per_s,
                      episode_s_p50=_round(percentile(durations, 50)), episode_s_p99=_round(percentile(durations, 99)),
                      success_by_length=_by_length(judged), trainer=trainer, cpu_s_per_success=cpu,
                      gpu_s_per_success=gpu, verifier_disagreement=_disagreement(episodes, unknown), unknown=unknown)


def _reward_row(policy: str | None, rewards: list[float]) -> RewardByPolicy:
    n = len(rewards)
    mean = sum(rewards) / n
    ci = None
    if n >= 2:
        ci = wilson95(sum(rewards), n) if all(r in (0.0, 1.0) for r in rewards) else t95(rewards)
    return RewardByPolicy(policy_version=policy, n=n, mean=round(mean, 4), ci95=ci)


def wilson95(successes: float, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of a success rate: inside [0, 1], and not empty at 0 or n
    successes (where a t interval of 0/1 rewards collapses to a point or reaches past the scale)."""
    z = 1.96
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def t95(rewards: list[float]) -> tuple[float, float]:
    """The mean's 95 % Student's t interval, clipped to the reward's scale [0, 1]."""
    n = len(rewards)
    mean = sum(rewards) / n
    sd = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (n - 1))
    half = (T95[n - 2] if n - 1 <= len(T95) else 1.96) * sd / math.sqrt(n)
    return (round(max(0.0, mean - half), 4), round(min(1.0, mean + half), 4))


def _disagreement(episodes: list[Any], unknown: dict[str, str]) -> VerifierDisagreement | None:
    """Of the episodes whose final state was judged twice (`episodes.reverify`), those whose verdict
    flipped."""
    seconds = [e.reverify for e in episodes if isinstance(e.reverify, dict)]
    if not seconds:
        unknown["verifier_disagreement"] = ("no episode of this run was judged twice (sample some: "
                                            "RolloutConfig.reverify_rate, POST /v1/sessions/{id}/reverify)")
        return None
    flipped = sum(1 for r in seconds if r.get("flipped"))
    return VerifierDisagreement(sampled=len(seconds), flipped=flipped, rate=round(flipped / len(seconds), 4))


def _version_key(version: str | None) -> tuple[int, float, str]:
    """Numeric versions in numeric order, then the others by name, then none."""
    if version is None:
        return (2, 0.0, "")
    try:
        return (0, float(version), version)
    except ValueError:
        return (1, 0.0, version)


def _bucket(steps: int) -> tuple[int, str]:
    if steps <= 1:
        return steps, str(steps)
    low = 1 << (steps.bit_length() - 1)
    return low, f"{low}-{2 * low - 1}"


def _by_length(judged: list[Any]) -> list[LengthBucket]:
    buckets: dict[tuple[int, str], list[bool]] = {}
    for e in judged:
        buckets.setdefault(_bucket(e.step_count), []).append(bool(e.passed))
    return [LengthBucket(steps=name, n=len(v), solved=sum(v), rate=_share(sum(v), len(v)))
            for (_, name), v in sorted(buckets.items())]


def _trainer_totals(reports: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    staleness: Counter[str] = Counter()
    for figures in reports:
        for key in COUNTERS:
            value = figures.get(key)
            if isinstance(value, int | float):
                out[key] = round(out.get(key, 0.0) + value, 6)
        hist = figures.get("staleness")
        if isinstance(hist, dict):
            staleness.update({str(k): v for k, v in hist.items() if isinstance(v, int | float)})
    if staleness:
        out["staleness"] = dict(sorted(staleness.items(), key=lambda kv: _version_key(kv[0])))
    return out


def _per_success(key: str, trainer: dict[str, Any], episodes: list[Any], solved: int,
                 unknown: dict[str, str]) -> float | None:
    """`key` seconds per solved task: what the trainer reported for its steps, else what the store
    recorded per episode (`timings[key]`), over the episodes that passed."""
    total = trainer.get(key)
    if total is None:
        recorded = [e.timings.get(key) for e in episodes if isinstance((e.timings or {}).get(key), int | float)]
        total = sum(recorded) if recorded else None
    name = f"{key}_per_success"
    if total is None:
        unknown[name] = f"no step report or episode timing holds {key}"
        return None
    if not solved:
        unknown[name] = "no episode of this run passed"
        return None
    return round(total / solved, 4)


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
