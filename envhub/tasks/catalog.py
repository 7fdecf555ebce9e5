"""The task catalogue: every task folder under the tasks root, and every task of every task set
there (materialised on first use into the data directory's cache), indexed by id."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import Path

from envhub.errors import NotFound, TaskFormatError
from envhub.tasks.model import Task
from envhub.tasks.sets import TaskSet, find_sets


class Catalog:
    """All tasks below `root` (`tasks/<family>/.../task.yaml`).

    Broken folders do not stop the server: they are kept in `errors` and shown by
    `envhub validate`, which rejects them.
    """

    def __init__(self, root: Path, cache: Path | None = None, families: Iterable[str] | None = None) -> None:
        self.root = root.resolve()
        self._cache = cache
        #: Only these families' sets are materialised and listed (a server's); None: every set.
        self.families = set(families) if families is not None else None
        self.errors: dict[Path, TaskFormatError] = {}

    @property
    def cache(self) -> Path:
        """Where task sets are materialised (`Settings.task_sets_cache`)."""
        if self._cache is None:
            from envhub.config import get_settings

            self._cache = get_settings().task_sets_cache
        return self._cache

    @cached_property
    def sets(self) -> dict[str, TaskSet]:
        found: dict[str, TaskSet] = {}
        for folder in find_sets(self.root):
            try:
                taskset = TaskSet.load(folder)
            except TaskFormatError as e:
                self.errors[folder] = e
                continue
            if self.families is None or taskset.config.family in self.families:
                found[taskset.id] = taskset
        return found

    @cached_property
    def tasks(self) -> dict[str, Task]:
        found: dict[str, Task] = {}
        if not self.root.is_dir():
            return found
        for cfg in sorted(self.root.rglob("task.yaml")):
            if any(part in ("state", "tests", "solution") for part in cfg.relative_to(self.root).parts[:-1]):
                continue  # a task.yaml inside a task's own files is data, not a task
            try:
                task = Task.load(cfg.parent)
            except TaskFormatError as e:
                self.errors[cfg.parent] = e
                continue
            found[task.id] = task
        for taskset in self.sets.values():
            try:
                folders = taskset.materialize(self.cache)
            except TaskFormatError as e:
                self.errors[taskset.path] = e
                continue
            if (failed := taskset.failure()) is not None:  # served: what was made; named: what was not
                self.errors[taskset.path] = failed
            configs = taskset.configs(folders)
            for seed, folder in folders.items():
                try:
                    task = _load_drawn(folder, taskset, configs.get(seed))
                except TaskFormatError as e:
                    self.errors[folder] = e
                    continue
                found[task.id] = task
        return found

    def get(self, task_id: str) -> Task:
        try:
            return self.tasks[task_id]
        except KeyError:
            raise NotFound.for_name("task", task_id, self.tasks) from None

    def for_family(self, family: str) -> list[Task]:
        return [t for t in self.tasks.values() if t.family == family]

    def sample(self, family: str, seed: int | None, keep: Callable[[Task], bool] | None = None) -> Task:
        """A task of `family` drawn by `seed`, among those `keep` accepts (all when none does, so
        the caller can say why the one drawn cannot run)."""
        tasks = self.for_family(family)
        if not tasks:
            raise NotFound(f"environment {family!r} has no tasks", kind="task", name=family)
        kept = [t for t in tasks if keep(t)] if keep else tasks
        return random.Random(seed).choice(kept or tasks)

    def filter(self, *, env: str | None = None, tag: str | None = None, difficulty: str | None = None,
               text: str | None = None, meta: dict[str, str] | None = None) -> list[Task]:
        out: Iterable[Task] = self.tasks.values()
        if env:
            out = (t for t in out if t.family == env)
        if tag:
            out = (t for t in out if tag in t.config.tags)
        if difficulty:
            out = (t for t in out if t.config.difficulty == difficulty)
        if meta:
            out = (t for t in out if all(str(t.config.metadata.get(k)) == v for k, v in meta.items()))
        if text:
            needle = text.lower()
            out = (t for t in out if needle in t.id.lower() or needle in t.config.title.lower()
                   or needle in t.prompt.lower())
        return list(out)


#: Materialised folders never change (their cache is named by the generator's digest), so each is
#: loaded once per process, however many catalogues (hubs, commands, tests) list it.
_drawn: dict[tuple[Path, Path], Task] = {}


def _load_drawn(folder: Path, taskset: TaskSet, raw: dict | None = None) -> Task:
    key = (folder, taskset.path)
    if key not in _drawn:
        _drawn[key] = Task.load(folder, taskset, raw)
    return _drawn[key]
