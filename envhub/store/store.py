"""`EpisodeStore`: the engine, the buffered writer and the reads pages and the CLI need."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from envhub.errors import Forbidden, NotFound
from envhub.spec import Calibration, EpisodeStep, RunDetail, RunInfo, RunStep, RunStepReport
from envhub.store import calibrations, repo, runs
from envhub.store.db import create_schema, make_engine
from envhub.store.models import EpisodeRow, RunRow, RunStepRow
from envhub.store.repo import utc
from envhub.store.schemas import EpisodeAggregate, EpisodeDetail, EpisodeSummary, LatencySummary, step_of
from envhub.store.stats import latency_summary
from envhub.store.viewer import Viewer
from envhub.store.writer import EpisodeWriter

T = TypeVar("T")


class EpisodeStore:
    """Reads are synchronous (call them from a thread, or use `run`); writes go through `writer`."""

    def __init__(self, url: str, *, spill_dir: Path | None = None, capacity: int = 100_000,
                 busy_timeout_ms: int = 5000, drain_timeout_s: float = 10.0) -> None:
        self.url = url
        self.engine: Engine = make_engine(url, busy_timeout_ms=busy_timeout_ms)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.writer = EpisodeWriter(self.engine, capacity=capacity, spill_dir=spill_dir)
        self.drain_timeout_s = drain_timeout_s
        self._schema_ready = False

    async def start(self) -> None:
        await self.writer.start()

    async def stop(self) -> None:
        await self.writer.stop(timeout_s=self.drain_timeout_s)
        self.engine.dispose()

    async def run(self, fn: Callable[[EpisodeStore], T]) -> T:
        """Run a blocking read in a worker thread."""
        return await asyncio.to_thread(fn, self)

    def _session(self) -> Session:
        if not self._schema_ready:  # a fresh database: reads see empty tables, not errors
            create_schema(self.engine)
            self._schema_ready = True
        return self.sessions()

    # -- reads ----------------------------------------------------------------------------------------
    def episodes(self, *, viewer: Viewer, env: str | None = None, task_id: str | None = None,
                 failure_class: str | None = None, policy_version: str | None = None, harness: str | None = None,
                 run_id: str | None = None, limit: int = 50, offset: int = 0) -> tuple[list[EpisodeSummary], int]:
        """The episodes `viewer` may read (`envhub.store.viewer`), newest first, and how many match."""
        with self._session() as s:
            rows, total = repo.list_episodes(s, viewer=viewer, env=env, task_id=task_id, failure_class=failure_class,
                                             policy_version=policy_version, harness=harness, run_id=run_id,
                                             limit=limit, offset=offset)
            return [EpisodeSummary.of(r) for r in rows], total

    def episode(self, episode_id: str, *, viewer: Viewer) -> EpisodeDetail | None:
        """The episode with its checks, or None when there is none `viewer` may read. Where `viewer`
        may not see its actions (a system run's, to a reader who is no admin), its check messages and
        detail are left out too: they may quote what the agent did."""
        with self._session() as s:
            row = repo.get_episode(s, episode_id=episode_id)
            if row is None or not viewer.may_read(row.owner):
                return None
            detail = EpisodeDetail.of(row)
            if viewer.may_see_actions(row.owner, row.policy_version):
                return detail
            return detail.model_copy(update={"detail": "", "checks": [c.model_copy(update={"message": ""})
                                                                     for c in detail.checks]})

    def steps(self, episode_id: str, *, viewer: Viewer, offset: int = 0,
              limit: int = 50) -> tuple[list[EpisodeStep], int]:
        """A page of the trajectory and how many steps it has; nothing where `viewer` may not see the
        actions (not its episode, or a system run's and `viewer` is no admin)."""
        with self._session() as s:
            head = s.execute(select(EpisodeRow.owner, EpisodeRow.policy_version)
                             .where(EpisodeRow.id == episode_id)).first()
            if head is None or not viewer.may_see_actions(*head):
                return [], 0
            rows = repo.get_steps(s, episode_id=episode_id, offset=offset, limit=limit)
            return [step_of(r) for r in rows], repo.count_steps(s, episode_id=episode_id)

    def total(self, *, env: str | None = None, task_id: str | None = None) -> int:
        """Every recorded episode that matches, whoever ran it (an aggregate)."""
        with self._session() as s:
            return repo.count_episodes(s, env=env, task_id=task_id)

    def latency(self, *, env: str | None = None, task_id: str | None = None) -> LatencySummary:
        with self._session() as s:
            samples = repo.latency_samples(s, env=env, task_id=task_id)
            return latency_summary(samples, repo.count_episodes(s, env=env, task_id=task_id))

    def aggregate(self, *, env: str | None = None, task_id: str | None = None) -> EpisodeAggregate:
        """Counts, failure classes, mean reward and latencies of every matching episode (public)."""
        with self._session() as s:
            samples = repo.latency_samples(s, env=env, task_id=task_id)
            total = repo.count_episodes(s, env=env, task_id=task_id)
            return EpisodeAggregate(episodes=total, **repo.failure_mix(s, env=env, task_id=task_id),
                                    latency=latency_summary(samples, total))

    def latency_samples(self, *, env: str | None = None, task_id: str | None = None) -> dict[str, list[float]]:
        with self._session() as s:
            return repo.latency_samples(s, env=env, task_id=task_id)

    def by_harness(self, *, env: str | None = None, task_id: str | None = None) -> dict[str, dict[str, Any]]:
        with self._session() as s:
            return repo.by_harness(s, env=env, task_id=task_id)

    def outcomes(self, *, env: str | None = None, task_id: str | None = None) -> list[tuple]:
        with self._session() as s:
            return repo.outcomes(s, env=env, task_id=task_id)

    def by_policy(self, *, viewer: Viewer, env: str | None = None, task_id: str | None = None) -> list[dict]:
        with self._session() as s:
            return repo.by_policy(s, viewer=viewer, env=env, task_id=task_id)

    def task_outcomes(self, task_ids: list[str]) -> dict[str, dict]:
        with self._session() as s:
            return repo.task_outcomes(s, task_ids=task_ids)

    def counts(self, column: str, *, env: str | None = None) -> dict[str, int]:
        with self._session() as s:
            return repo.counts_by(s, column=column, env=env)

    def calibrations(self, task_ids: list[str] | None = None) -> dict[str, Calibration]:
        """Per task, pass@k from the newest calibration run that played it (`envhub.store.calibrations`)."""
        with self._session() as s:
            return calibrations.latest(s, task_ids)

    # -- training runs (`envhub.store.runs`) ----------------------------------------------------------
    def create_run(self, *, owner: str | None, run_id: str | None = None,
                   config: dict[str, Any] | None = None) -> RunInfo:
        """A run of `owner`'s (the one with this id when it exists already and is theirs: a retry)."""
        with self._session() as s:
            row = runs.create_run(s, owner=owner, run_id=run_id, config=config or {})
            return _run_info(row, len(runs.run_steps(s, run_id=row.id)))

    def report_step(self, run_id: str, report: RunStepReport, *, viewer: Viewer) -> RunStep:
        """Record a step of a run `viewer` owns: NotFound for a run it may not read, Forbidden for
        another's that it may (an admin reads every run, but reports only its own)."""
        with self._session() as s:
            run = runs.get_run(s, run_id=run_id, viewer=viewer)
            if run is None:
                raise NotFound(f"no run {run_id!r} in this server's store")
            if run.owner != viewer.owner:
                raise Forbidden(f"run {run_id!r} is another caller's: only its owner reports its steps")
            row = runs.report_step(s, run=run, step=report.step, policy_version=report.policy_version,
                                   figures=report.model_dump()["figures"])
            return _run_step(row)

    def runs(self, *, viewer: Viewer, limit: int = 50, offset: int = 0) -> tuple[list[RunInfo], int]:
        """The runs `viewer` may read, newest first, and how many there are."""
        with self._session() as s:
            rows, total = runs.list_runs(s, viewer=viewer, limit=limit, offset=offset)
            return [_run_info(r, n) for r, n in rows], total

    def run_detail(self, run_id: str, *, viewer: Viewer) -> RunDetail | None:
        """The run with its step reports and figures; None when there is none `viewer` may read."""
        with self._session() as s:
            run = runs.get_run(s, run_id=run_id, viewer=viewer)
            if run is None:
                return None
            steps = runs.run_steps(s, run_id=run.id)
            info = _run_info(run, len(steps))
            return RunDetail(**info.model_dump(exclude={"protocol"}), step_reports=[_run_step(r) for r in steps],
                             figures=runs.run_figures(s, run=run, steps=steps))


def _run_info(row: RunRow, steps: int) -> RunInfo:
    return RunInfo(id=row.id, created_at=utc(row.created_at), config=row.config or {}, steps=steps)


def _run_step(row: RunStepRow) -> RunStep:
    return RunStep(step=row.step, policy_version=row.policy_version, reported_at=utc(row.reported_at),
                   figures=row.figures or {})
