"""Measured difficulty: pass@k of a policy per task, from a calibration run's episodes.

`envhub calibrate` (`envhub.rl.calibrate`) plays each task k times with one policy and records the
episodes as a run (`/v1/runs`) whose configuration says `kind: calibration`. The registry shows each
task's newest such run that played it (`latest`) as the task's `calibration`. Both sides compute the
figures here, from the same counts. A run's episodes are its owner's episodes that carry its id, as
for every run (`envhub.store.runs`); two reads: the calibration runs, newest first, and their
episodes counted per (run, task).

pass@k is the unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained on
Code", eq. 1): with n judged episodes of which c passed, the chance that at least one of k drawn
without replacement passed, 1 - C(n-c, k) / C(n, k). Only judged (trainable) episodes count: an
episode ended by a fault no policy causes (`env_error`, `verifier_error`, `task_invalid`,
`unavailable`) is counted apart as masked, neither a pass nor a fail.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from envhub.spec import Calibration
from envhub.store.models import EpisodeRow, RunRow
from envhub.store.repo import utc
from envhub.store.runs import JUDGED

#: `config["kind"]` of a calibration run.
KIND = "calibration"


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate from `n` judged samples of which `c` passed (needs n ≥ k ≥ 1)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if not 0 <= c <= n:
        raise ValueError(f"{c} passed of {n} samples")
    if n < k:
        raise ValueError(f"pass@{k} needs at least {k} judged samples, not {n}")
    if n - c < k:  # every k-subset holds a pass
        return 1.0
    # 1 - prod_{i=n-c+1}^{n} (1 - k/i): the ratio of binomials without their large factorials
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


@dataclass(frozen=True)
class Figures:
    """One task's figures in one calibration run."""

    k: int
    n: int  # judged episodes
    passed: int
    masked: int
    reward_sum: float = 0.0

    @property
    def pass_at_1(self) -> float | None:
        return round(self.passed / self.n, 4) if self.n else None

    @property
    def pass_at_k(self) -> float | None:
        """None when fewer than k episodes were judged (the estimate needs k of them)."""
        return round(pass_at_k(self.n, self.passed, self.k), 4) if self.n >= self.k else None

    @property
    def mean_reward(self) -> float | None:
        return round(self.reward_sum / self.n, 4) if self.n else None

    def as_dict(self) -> dict[str, float | int | None]:
        return {"k": self.k, "n": self.n, "passed": self.passed, "masked": self.masked,
                "pass_at_1": self.pass_at_1, "pass_at_k": self.pass_at_k, "mean_reward": self.mean_reward}


#: Above this many tasks the episodes are read for every task (one IN list stays small).
MAX_IN = 900


def calibration_runs(session: Session) -> list[RunRow]:
    """The calibration runs, newest first (runs are few: their configurations are read here)."""
    rows = session.scalars(select(RunRow).order_by(RunRow.created_at.desc(), RunRow.id.desc())).all()
    return [r for r in rows if isinstance(r.config, dict) and r.config.get("kind") == KIND]


def latest(session: Session, task_ids: Iterable[str] | None = None) -> dict[str, Calibration]:
    """Per task (of `task_ids`, or every one), the figures of the newest calibration run with an
    ended episode of it."""
    runs = calibration_runs(session)
    if not runs:
        return {}
    wanted = None if task_ids is None else set(task_ids)
    judged = case((EpisodeRow.failure_class.in_(JUDGED) & EpisodeRow.reward.is_not(None), 1), else_=0)
    stmt = (select(EpisodeRow.run_id, EpisodeRow.owner, EpisodeRow.task_id, func.sum(judged),
                   func.count(), func.sum(case((EpisodeRow.passed.is_(True), judged), else_=0)),
                   func.sum(case((judged == 1, EpisodeRow.reward), else_=0.0)))
            .where(EpisodeRow.run_id.in_([r.id for r in runs]), EpisodeRow.failure_class.is_not(None))
            .group_by(EpisodeRow.run_id, EpisodeRow.owner, EpisodeRow.task_id))
    if wanted is not None and len(wanted) <= MAX_IN:
        stmt = stmt.where(EpisodeRow.task_id.in_(sorted(wanted)))
    by_run: dict[str, dict[str, Figures]] = {}
    owners = {r.id: r for r in runs}
    for run_id, owner, task_id, n, total, passed, reward_sum in session.execute(stmt):
        run = owners[run_id]
        if owner != run.owner or (wanted is not None and task_id not in wanted):
            continue  # another caller's episodes that named the id: not the run's
        by_run.setdefault(run_id, {})[task_id] = Figures(
            k=_k(run.config), n=int(n or 0), passed=int(passed or 0), masked=int(total) - int(n or 0),
            reward_sum=float(reward_sum or 0.0))
    out: dict[str, Calibration] = {}
    for run in runs:  # newest first: the first run found for a task is its calibration
        for task_id, figures in by_run.get(run.id, {}).items():
            out.setdefault(task_id, of_run(run, figures))
    return out


def of_run(run: RunRow, figures: Figures) -> Calibration:
    return Calibration(run_id=run.id, policy=str(run.config.get("policy", "")), calibrated_at=utc(run.created_at),
                       **{k: v for k, v in figures.as_dict().items()})


def _k(config: dict[str, Any]) -> int:
    k = config.get("k")
    return k if isinstance(k, int) and k >= 1 else 1

