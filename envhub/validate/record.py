"""Validation records: `validation.json` beside each task, keyed by what it judged.

The key hashes the task's files and the code that judges them (the verifier runner, the
`verifiers` library and the task's family package), so a record goes stale the moment either
changes, and CI refuses stale records.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from envhub.tasks.model import Task

REPO_ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=None)
def judge_sha256(family: str) -> str:
    """Hash of the code that judges tasks of `family`."""
    from envhub.tasks.model import tree_sha256

    h = hashlib.sha256()
    for part in (REPO_ROOT / "envhub" / "verify", REPO_ROOT / "verifiers", REPO_ROOT / "environments" / family):
        h.update(part.name.encode())
        h.update(tree_sha256(part).encode() if part.exists() else b"-")
    return h.hexdigest()


def record_key(task: Task) -> str:
    return hashlib.sha256(f"{task.files_sha256()}:{judge_sha256(task.family)}".encode()).hexdigest()


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
