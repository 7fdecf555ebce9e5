"""What the store shows (pages, CLI, JSON): pydantic views built from ORM rows (a step and a check
are the wire models `EpisodeStep` and `EpisodeCheck`, one shape everywhere)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from envhub.spec import EpisodeCheck, EpisodeHeader, EpisodeStep
from envhub.store.models import CheckRow, EpisodeRow, StepRow
from envhub.store.repo import utc


class EpisodeSummary(EpisodeHeader):
    """An episode as the pages and the CLI list it: its header (`envhub.spec.EpisodeHeader`) and how it ended."""

    ended_at: datetime | None
    step_count: int
    reward: float | None
    passed: bool | None
    failure_class: str | None
    trainable: bool | None
    reset_s: float | None
    verify_s: float | None

    @property
    def outcome(self) -> str:
        return self.failure_class or "unverified"

    @classmethod
    def of(cls, row: EpisodeRow) -> EpisodeSummary:
        """The row's columns of the summary's fields, by name (a time as UTC: SQLite hands back naive ones)."""
        values = {name: getattr(row, name) for name in EpisodeSummary.model_fields}
        return cls(**{name: utc(v) if isinstance(v, datetime) else v for name, v in values.items()})


def check_of(row: CheckRow) -> EpisodeCheck:
    return EpisodeCheck(id=row.check_id, kind=row.kind, weight=row.weight, passed=row.passed, score=row.score,
                        message=row.message)


class EpisodeDetail(EpisodeSummary):
    verified_at: datetime | None
    detail: str
    verifier_sha256: str | None
    timings: dict[str, Any]
    checks: list[EpisodeCheck]

    @classmethod
    def of(cls, row: EpisodeRow) -> EpisodeDetail:  # type: ignore[override]
        base = EpisodeSummary.of(row).model_dump()
        return cls(**base, verified_at=utc(row.verified_at), detail=row.detail, verifier_sha256=row.verifier_sha256,
                   timings=row.timings or {}, checks=[check_of(c) for c in row.checks])


def step_of(row: StepRow) -> EpisodeStep:
    try:
        args: Any = json.loads(row.arguments)
    except ValueError:  # cut mid-way: show the text as it is
        args = row.arguments
    return EpisodeStep(step=row.idx, tool=row.tool, arguments=args, arguments_cut=row.arguments_cut,
                       observation=row.observation, observation_cut=row.observation_cut, is_error=row.is_error,
                       failure=row.failure, elapsed_s=row.elapsed_s)


class LatencyFigure(BaseModel):
    op: str
    n: int
    p50_s: float | None
    p99_s: float | None
    max_s: float | None


class LatencySummary(BaseModel):
    episodes: int
    figures: list[LatencyFigure]


class EpisodeAggregate(BaseModel):
    """What anyone may read of the recorded episodes (`/v1/episodes/summary`): counts, rewards,
    failure classes and timings; never an episode's id, owner, policy or trajectory."""

    model_config = ConfigDict(extra="forbid")
    episodes: int
    failure_classes: dict[str, int]
    #: Of the trainable judged episodes (masked infra faults left out): their mean reward, how many, how many passed.
    mean_reward: float | None
    verified: int
    solved: int
    latency: LatencySummary
