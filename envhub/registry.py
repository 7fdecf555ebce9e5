"""The registry: what a hub serves and how healthy it is, in one place for the REST routes
(`/v1/envs`, `/v1/tasks`) and the web pages, so a page and the JSON API never disagree.

It joins the families, the catalogue, the validation records and the episode store; it holds
no state of its own beyond a cache of the records it has read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from envhub import harness
from envhub import records as record
from envhub.errors import NotFound
from envhub.spec import Calibration, EnvInfo, MissingRequirement, TaskInfo, ValidationSummary

if TYPE_CHECKING:
    from envhub.env import Family
    from envhub.store import EpisodeStore
    from envhub.tasks.catalog import Catalog
    from envhub.tasks.model import Task

log = logging.getLogger(__name__)


@dataclass
class Registry:
    families: dict[str, Family]
    catalog: Catalog
    store: EpisodeStore | None = None

    def family(self, name: str) -> Family:
        try:
            return self.families[name]
        except KeyError:
            raise NotFound.for_name("environment", name, self.families) from None

    def status(self, task: Task) -> str:
        """`validated`, `rejected`, `stale` or `unvalidated` (`envhub.records`)."""
        return record.validation_status(task)

    def served(self) -> list[Task]:
        return [t for t in self.catalog.tasks.values() if t.family in self.families]

    def tasks(self, *, env: str | None = None, tag: str | None = None, difficulty: str | None = None,
              status: str | None = None, text: str | None = None, meta: dict[str, str] | None = None) -> list[Task]:
        """The served tasks that match every filter given (`meta`: facet values)."""
        found = self.catalog.filter(env=env, tag=tag, difficulty=difficulty, text=text, meta=meta)
        return [t for t in found if t.family in self.families and (not status or self.status(t) == status)]

    def facet_labels(self) -> dict[str, str]:
        """Every served family's facets (`Family.facet_labels`), for filters."""
        labels: dict[str, str] = {}
        for family in self.families.values():
            labels.update(family.facet_labels)
        return labels

    def facets(self, task: Task) -> dict[str, str]:
        return self.family(task.family).facets(task.config.metadata)

    def task_info(self, task: Task, calibration: Calibration | None = None) -> TaskInfo:
        """The task's public facts; `calibration` from `calibrations` (one read for many tasks)."""
        rec = task.validation_record() or {}
        summary = {k: v for k, v in rec.items() if k in ("validated_at", "checks", "runs", "rejections", "timings")}
        return TaskInfo(id=task.id, env=task.family, title=task.config.title, prompt=task.prompt,
                        difficulty=task.config.difficulty, tags=task.config.tags, metadata=task.config.metadata,
                        validation=ValidationSummary(status=self.status(task), **summary),
                        unavailable=self.families[task.family].availability(task), calibration=calibration)

    def calibrations(self, tasks: list[Task]) -> dict[str, Calibration]:
        """pass@k per task from the store's newest calibration run that played it (`envhub calibrate`);
        none without a store, or while it cannot be read (a page still renders)."""
        from sqlalchemy.exc import SQLAlchemyError

        if self.store is None or not tasks:
            return {}
        try:
            return self.store.calibrations([t.id for t in tasks])
        except SQLAlchemyError as e:
            log.warning("calibrations unreadable: %s", e)
            return {}


    def family_availability(self, name: str) -> tuple[str, MissingRequirement | None, int]:
        """Whether a family can run here ("available", "partial" or "unavailable"), what it lacks, and
        how many of its tasks cannot run."""
        family = self.family(name)
        tasks = self.catalog.for_family(name)
        lacking = [m for m in (family.availability(t) for t in tasks) if m is not None]
        cannot = len(lacking)
        missing = family.availability()
        if missing is None and lacking:  # the family says nothing itself: sum up its tasks' reasons
            missing = MissingRequirement(reason="; ".join(dict.fromkeys(m.reason for m in lacking)),
                                         fix=" && ".join(dict.fromkeys(m.fix for m in lacking)))
        if (tasks and cannot == len(tasks)) or (missing and not tasks):
            return "unavailable", missing, cannot
        return ("partial" if cannot or missing else "available"), missing, cannot

    def env_info(self, name: str) -> EnvInfo:
        family = self.family(name)
        tasks = self.catalog.for_family(name)
        statuses = [self.status(t) for t in tasks]
        availability, missing, cannot = self.family_availability(name)
        return EnvInfo(name=name, description=family.description, task_count=len(tasks),
                       validated=statuses.count("validated"), rejected=statuses.count("rejected"),
                       tools=(specs := family.tool_specs()), availability=availability, unavailable=missing,
                       unavailable_tasks=cannot, harnesses=harness.support(name, {t.name for t in specs}))


_invalid: dict[tuple[Path, int], str | None] = {}


def invalid_reason(task: Task) -> str | None:
    """Why a task is invalid as served, when its fresh record says a control proved it.

    Every verify asks, so the answer is kept per task folder and record version (its mtime): the
    record is read, and the task's files hashed for its key, once per version. Task files are
    loaded once per process anyway (the catalogue), like the judging code the key also covers."""
    try:
        version = task.validation_path.stat().st_mtime_ns
    except OSError:
        return None
    key = (task.path, version)
    if key not in _invalid:
        _invalid[key] = record.invalid_reason(task)
    return _invalid[key]


def by_calibration(tasks: list[Task], calibrations: dict[str, Calibration], *, calibrated: bool | None = None,
                   pass_at_k_min: float | None = None, pass_at_k_max: float | None = None) -> list[Task]:
    """The tasks whose calibration matches: `calibrated` (has one or not), pass@k within the bounds
    (a task without a pass@k, uncalibrated or with fewer than k judged episodes, matches no bound)."""
    def keep(task: Task) -> bool:
        cal = calibrations.get(task.id)
        if calibrated is not None and (cal is not None) != calibrated:
            return False
        if pass_at_k_min is None and pass_at_k_max is None:
            return True
        if cal is None or cal.pass_at_k is None:
            return False
        return ((pass_at_k_min is None or cal.pass_at_k >= pass_at_k_min)
                and (pass_at_k_max is None or cal.pass_at_k <= pass_at_k_max))
    return [t for t in tasks if keep(t)]
