"""Validation records: `validation.json` beside each task, keyed by what it judged.

The key hashes the task's files and the code that judges them: the verifier runner, the
`verifiers` modules its tests import, and the family files the family declares as judging
(`Family.judged_by`: state export, oracle, controls, mutators, its own validation; the whole
package when it declares nothing). A record goes stale the moment any of them changes, and CI
refuses stale records. Tool code that only serves the agent is not in the key: CI's oracle
smoke over HTTP guards it, so a refactor of tools does not force re-validating the catalogue.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envhub.families import family_class

if TYPE_CHECKING:
    from envhub.tasks.model import Task

REPO_ROOT = Path(__file__).resolve().parents[2]


IMPORT_RE = re.compile(r"^\s*(?:from|import)\s+verifiers(?:\.(\w+))?", re.M)


@cache
def _part_sha256(path: Path) -> str:
    from envhub.tasks.model import tree_sha256

    return tree_sha256(path) if path.exists() else "-"


def judge_parts(task: Task) -> list[Path]:
    """The code that judges `task`: the runner, the family package, and the `verifiers` modules
    its tests import (not the whole library, so one family's helper changes leave others fresh)."""
    modules = {"__init__"}
    for test in task.tests_dir.rglob("*.py"):
        modules.update(m for m in IMPORT_RE.findall(test.read_text(errors="replace")) if m)
    lib = REPO_ROOT / "verifiers"
    return [REPO_ROOT / "envhub" / "verify", *family_class(task.family).judge_files(),
            *sorted(lib / f"{m}.py" for m in modules)]


def _part_name(part: Path) -> str:
    try:
        return part.relative_to(REPO_ROOT).as_posix()
    except ValueError:  # a family installed outside this checkout
        return part.as_posix()


def judge_sha256(task: Task) -> str:
    h = hashlib.sha256()
    for part in judge_parts(task):
        h.update(_part_name(part).encode())
        h.update(_part_sha256(part).encode())
    return h.hexdigest()


def record_key(task: Task) -> str:
    return hashlib.sha256(f"{task.files_sha256()}:{judge_sha256(task)}".encode()).hexdigest()


def validation_status(task: Task) -> str:
    """`validated`, `rejected`, `stale` (judged something else) or `unvalidated`."""
    record = task.validation_record()
    if record is None:
        return "unvalidated"
    if record.get("key") != record_key(task):
        return "stale"
    return "validated" if record.get("status") == "validated" else "rejected"


def write_record(task: Task, record: dict[str, Any]) -> None:
    record = {**record, "key": record_key(task)}
    task.validation_path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")


def invalid_reason(task: Task) -> str | None:
    """Why a task is invalid as served, when its fresh record says a control proved it."""
    record = task.validation_record()
    if not record or not record.get("task_invalid") or record.get("key") != record_key(task):
        return None
    return str(record["task_invalid"])
