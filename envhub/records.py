"""Validation records: `validation.json` beside each task, keyed by what it judged.

The key hashes the task's files and the code that judges them: the verifier runner, the
family files the family declares as judging (`Family.judged_by`: state export, oracle,
controls, mutators, its own validation; the whole package when it declares nothing), and the
`verifiers` modules that the task's tests and those family files import, in any form, with
what those modules import in turn. A record goes stale the moment any of them changes, and CI
refuses stale records. Tool code that only serves the agent is not in the key: CI's oracle
smoke over HTTP guards it, so a refactor of tools does not force re-validating the catalogue.
The rule is written down in docs/architecture.md.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envhub.config import REPO_ROOT
from envhub.families import family_class

if TYPE_CHECKING:
    from envhub.tasks.model import Task

LIBRARY = REPO_ROOT / "verifiers"


@cache
def _part_sha256(path: Path) -> str:
    from envhub.tasks.digest import tree_sha256

    return tree_sha256(path) if path.exists() else "-"


#: `from verifiers[.x] import names` (names may be a parenthesised, multi-line list), and in the
#: library's own files `from .[x] import names`; `import verifiers.x[, ...]`.
FROM_RE = re.compile(r"^[ \t]*from[ \t]+(verifiers\.?|\.)(\w*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
IMPORT_RE = re.compile(r"^[ \t]*import[ \t]+([^\n#]*)", re.M)


def verifier_imports(source: str, *, inside: bool = False) -> set[str]:
    """The `verifiers` modules `source` imports, in every form: `import verifiers.x`,
    `from verifiers.x import y`, `from verifiers import x as y` (when x is a module of the
    library, not a name like `check`); `inside`: source of the library itself, whose relative
    imports count too. Read with regular expressions, not `ast`: `envhub list` keys every task."""
    found = set()
    for package, module, names in FROM_RE.findall(source):
        if (package == "." and not inside) or (package == "verifiers" and module):  # `verifiersX`
            continue
        if module:
            found.add(module)
        else:
            found.update(n.split()[0] for n in names.strip("()").replace("\n", " ").split(",") if n.strip())
    for names in IMPORT_RE.findall(source):
        found.update(n.split()[0].split(".")[1] for n in names.split(",") if n.strip().startswith("verifiers."))
    return {m for m in found if (LIBRARY / f"{m}.py").is_file()}


@cache
def _library_closure(module: str) -> frozenset[str]:
    """`module` and every library module it imports, directly or not."""
    seen, todo = {module}, [module]
    while todo:
        source = (LIBRARY / f"{todo.pop()}.py").read_text(errors="replace")
        for m in verifier_imports(source, inside=True) - seen:
            seen.add(m)
            todo.append(m)
    return frozenset(seen)


def judge_parts(task: Task) -> list[Path]:
    """The code that judges `task`: the runner, the family's judging files (`Family.judge_files`),
    and the `verifiers` modules that its tests and those family files import, with what those
    import in turn (not the whole library, so one family's helper changes leave others fresh)."""
    family_files = family_class(task.family).judge_files(task)
    direct = {"__init__", *_family_imports(task.family)}
    for test in task.tests_dir.rglob("*.py"):
        direct |= verifier_imports(test.read_text(errors="replace"))
    modules = set().union(*(_library_closure(m) for m in direct))
    return [REPO_ROOT / "envhub" / "verify", *family_files, *sorted(LIBRARY / f"{m}.py" for m in modules)]


@cache
def _family_imports(family: str) -> frozenset[str]:
    """The library modules the family's judging files import (read once per process, like the
    hashes of the judging code)."""
    found: set[str] = set()
    for part in family_class(family).judge_files():
        for path in [part] if part.is_file() else part.rglob("*.py"):
            if path.suffix == ".py":
                found |= verifier_imports(path.read_text(errors="replace"))
    return frozenset(found)


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
    if task.taskset is not None:
        task.taskset.write_record(int(task.path.name), record)
        return
    task.validation_path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")


def invalid_reason(task: Task) -> str | None:
    """Why a task is invalid as served, when its fresh record says a control proved it."""
    record = task.validation_record()
    if not record or not record.get("task_invalid") or record.get("key") != record_key(task):
        return None
    return str(record["task_invalid"])
