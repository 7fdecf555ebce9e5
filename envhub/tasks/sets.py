"""Task sets: a generator, its version and a seed range, as data.

    tasks/<family>/<name>/
        taskset.yaml       TaskSetConfig below: which generator, its version, how many seeds
        validation.jsonl   the set's validation records, one line per seed (written by `envhub validate`)

A set's task `<id>/<seed>` is a task folder like any other once materialised: the generator
writes it, the same bytes on every machine, into a cache under the data directory named by a
digest of the set file and the generator's package, so a changed generator materialises anew
and an unchanged one never twice. The repository keeps the set file and one records file, not
a folder per task; records are keyed, as every record is, by the task's files and the code that
judges them (`envhub.records`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from importlib.util import find_spec
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envhub.errors import TaskFormatError
from envhub.tasks.digest import tree_sha256
from envhub.tasks.task_yaml import read_config

SET_FILE = "taskset.yaml"
#: The parsed `task.yaml` of every materialised seed, beside their folders (`TaskSet.configs`).
CONFIGS_FILE = ".configs.json"
RECORDS_FILE = "validation.jsonl"
GENERATOR_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"
PARALLEL_FROM = 64  # missing seeds from which materialising uses a process per core

log = logging.getLogger("envhub.tasks")

#: A generator writes the task of one seed as `root/<seed>`, its id `<set id>/<seed>`.
Generator = Callable[[str, int, Path], Path]


class TaskSetConfig(BaseModel):
    """`taskset.yaml`."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*/[a-z0-9][a-z0-9_-]*$", description="`<family>/<set>`.")
    family: str
    title: str = Field(min_length=1, max_length=200)
    generator: str = Field(pattern=GENERATOR_PATTERN, description="`module:function` (see `Generator`).")
    version: int = Field(ge=1, description="Bumped when the same seed should make another task.")
    seeds: int = Field(ge=1, le=1_000_000, description="Seeds 0 .. seeds-1.")


@dataclass(eq=False)
class TaskSet:
    config: TaskSetConfig
    path: Path  # the set's folder in the tasks tree
    _records: tuple[int, dict[int, dict[str, Any]]] | None = field(default=None, repr=False)
    failures: list[str] = field(default_factory=list)  # seeds the last `materialize` could not make

    @property
    def id(self) -> str:
        return self.config.id

    @property
    def records_path(self) -> Path:
        return self.path / RECORDS_FILE

    @classmethod
    def load(cls, path: Path) -> TaskSet:
        cfg_path = path / SET_FILE
        try:
            raw = yaml.safe_load(cfg_path.read_text(encoding="utf-8")) or {}
            config = TaskSetConfig.model_validate(raw)
        except yaml.YAMLError as e:
            raise TaskFormatError(f"{cfg_path}: not valid YAML: {e}", file=str(cfg_path)) from e
        except ValidationError as e:
            first = e.errors()[0]
            name = ".".join(str(p) for p in first["loc"]) or "(root)"
            raise TaskFormatError(f"{cfg_path}: field {name!r}: {first['msg']}", file=str(cfg_path),
                                  field=name) from e
        if config.id.split("/")[0] != config.family:
            raise TaskFormatError(f"{cfg_path}: field 'id': must start with the family {config.family!r}",
                                  file=str(cfg_path), field="id")
        if not path.resolve().as_posix().endswith("/" + config.id.split("/", 1)[1]):
            raise TaskFormatError(f"{cfg_path}: field 'id': {config.id!r} does not match folder {path.name!r}",
                                  file=str(cfg_path), field="id")
        return cls(config, path.resolve())

    # --- materialising ----------------------------------------------------------------------------

    @cached_property
    def digest(self) -> str:
        """Names the cache: the set file and every file of the generator's top package folder
        (a family's generator reads its family's code: intents, tools, seed data). Hashed once
        per loaded set: listing, counting and materialising all ask for it."""
        h = hashlib.sha256((self.path / SET_FILE).read_bytes())
        module = self.config.generator.split(":")[0]
        try:
            spec = find_spec(module)
        except ImportError:
            spec = None
        if spec is None or spec.origin is None:
            raise TaskFormatError(f"{self.path / SET_FILE}: field 'generator': no module {module!r}",
                                  file=str(self.path / SET_FILE), field="generator")
        package = Path(spec.origin).parent
        h.update(tree_sha256(package).encode())
        return h.hexdigest()[:16]

    def folder(self, cache: Path) -> Path:
        """Where this set's tasks are materialised: `<cache>/<digest>/<family>/<set>/<seed>`."""
        return cache / self.digest / self.id

    def missing(self, cache: Path) -> list[int]:
        """Seeds whose task is not materialised yet."""
        root = self.folder(cache)
        return [s for s in range(self.config.seeds) if not (root / str(s) / "task.yaml").is_file()]

    def materialize(self, cache: Path, seeds: range | None = None,
                    advance: Callable[[], None] | None = None) -> dict[int, Path]:
        """Every seed's task folder, writing those missing (in parallel when many are);
        `advance` is called as each missing one is written (a progress bar). A seed the generator
        fails on is left out and named in `failures`: a broken generator is the set's fault, and
        it stops no other task from being served."""
        root = self.folder(cache)
        seeds = seeds if seeds is not None else range(self.config.seeds)
        missing = [s for s in seeds if not (root / str(s) / "task.yaml").is_file()]
        failed: list[str] = []
        if missing:
            root.mkdir(parents=True, exist_ok=True)
            log.info("%s: materialising %d of %d tasks into %s", self.id, len(missing), len(seeds), root)
            workers = min(os.cpu_count() or 1, 8)
            if len(missing) >= PARALLEL_FROM and workers > 1:
                # spawn, not fork: a server's threads must not be copied into a child mid-lock
                with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
                    for error in pool.map(_materialize_one,
                                          [(self.config.generator, self.id, s, root) for s in missing], chunksize=8):
                        failed += [error] if error else []
                        if advance:
                            advance()
            else:
                for s in missing:
                    error = _materialize_one((self.config.generator, self.id, s, root))
                    failed += [error] if error else []
                    if advance:
                        advance()
        self.failures = failed
        return {s: root / str(s) for s in seeds if (root / str(s) / "task.yaml").is_file()}

    def failure(self) -> TaskFormatError | None:
        """What the last `materialize` could not make, as the set's format error."""
        if not self.failures:
            return None
        return TaskFormatError(f"{self.path / SET_FILE}: the generator failed on {len(self.failures)} seeds; "
                               f"first: {self.failures[0]}", file=str(self.path / SET_FILE), field="generator")

    def configs(self, folders: dict[int, Path]) -> dict[int, Any]:
        """Each materialised seed's `task.yaml`, parsed. Kept in one JSON file beside the folders
        (`CONFIGS_FILE`), each with its file's size and mtime: a catalogue of thousands of drawn
        tasks parses their YAML once, not in every process (YAML is about 20 times slower to read).
        A file that changed since, or a seed not kept yet, is parsed again and the file rewritten."""
        if not folders:
            return {}
        root = next(iter(folders.values())).parent
        path = root / CONFIGS_FILE
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            kept = {}
        out: dict[int, Any] = {}
        changed = False
        for seed, folder in folders.items():
            cfg = folder / "task.yaml"
            try:
                st = cfg.stat()
            except OSError:
                continue  # Task.load names what is missing
            stamp = [st.st_size, st.st_mtime_ns]
            entry = kept.get(str(seed)) if isinstance(kept, dict) else None
            if not (isinstance(entry, dict) and entry.get("stamp") == stamp):
                try:
                    entry = {"stamp": stamp, "raw": read_config(cfg)}
                except TaskFormatError:
                    continue
                kept[str(seed)] = entry
                changed = True
            out[seed] = entry["raw"]
        if changed:
            try:
                _write_whole(path, json.dumps(kept, separators=(",", ":")))
            except OSError as e:  # a read-only cache: parse again next time
                log.debug("%s: configs not kept: %s", root, e)
        return out

    # --- records ----------------------------------------------------------------------------------

    def records(self) -> dict[int, dict[str, Any]]:
        """Every seed's record (read again only when the file changed)."""
        try:
            version = self.records_path.stat().st_mtime_ns
        except OSError:
            return {}
        if self._records is None or self._records[0] != version:
            found: dict[int, dict[str, Any]] = {}
            for line in self.records_path.read_text().splitlines():
                try:
                    rec = json.loads(line)
                    found[int(rec.pop("seed"))] = rec
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue  # a torn or hand-edited line is no record: the task reads as unvalidated
            self._records = (version, found)
        return self._records[1]

    def record(self, seed: int) -> dict[str, Any] | None:
        return self.records().get(seed)

    def write_record(self, seed: int, record: dict[str, Any]) -> None:
        """Set one seed's record; concurrent writers (validation jobs) take turns on a lock file,
        and the file is replaced whole, so a reader never sees half of it."""
        with open(self.path / f".{RECORDS_FILE}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._records = None
            records = dict(self.records())
            records[seed] = record
            text = "".join(json.dumps({"seed": s, **records[s]}, sort_keys=True, separators=(",", ":")) + "\n"
                           for s in sorted(records))
            _write_whole(self.records_path, text)
            self._records = None


def _write_whole(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename, so a reader never sees half of it; readable by
    every user (a file of the repository or a shared cache, not mkstemp's private one). A failed
    write leaves no temporary file behind."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _materialize_one(job: tuple[str, str, int, Path]) -> str | None:
    """Write one seed's folder beside its final place, then move it there in one rename (another
    process materialising the same seed at once is harmless: the same bytes, the first wins).
    Returns what went wrong, or None."""
    generator, set_id, seed, root = job
    final = root / str(seed)
    if (final / "task.yaml").is_file():
        return None
    try:
        module, name = generator.split(":")
        fn: Generator = getattr(importlib.import_module(module), name)  # in a worker process: by name
        with tempfile.TemporaryDirectory(prefix=f".{seed}-", dir=root) as tmp:
            made = fn(set_id, seed, Path(tmp))
            try:
                os.rename(made, final)
            except OSError:
                if not (final / "task.yaml").is_file():
                    raise
                shutil.rmtree(made, ignore_errors=True)
    except Exception as e:  # the generator's own bug: named once the other seeds are written
        log.warning("%s: seed %d: %s: %s", set_id, seed, type(e).__name__, e)
        return f"seed {seed}: {type(e).__name__}: {str(e)[:300]}"
    return None


def find_sets(root: Path) -> list[Path]:
    """Folders below `root` that hold a set file."""
    return sorted(p.parent for p in root.rglob(SET_FILE)) if root.is_dir() else []
