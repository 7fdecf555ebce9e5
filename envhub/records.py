"""Validation records: `validation.json` beside each task, keyed by what it judged.

The key hashes the task's files and the code that judges them: the verifier runtime's verdict
(how pytest runs, how its result is read, the packages it runs with: `RUNTIME`), the files the
family declares as judging (`Family.judged_by`: state export, oracle, controls, mutators, its
own validation; the whole package when it declares nothing), and the `verifiers` modules that
the task's tests and those family files import, in any form, with what those modules import in
turn. A record goes stale the moment any of them changes, and CI refuses stale records. Tool
code that only serves the agent is not in the key: CI's oracle smoke over HTTP guards it, so a
refactor of tools does not force re-validating the catalogue. Nor is how a verify is carried out
(a cold sandbox or a warm zygote's fork): tests hold the two ways to the same verdicts, as they
hold the sandbox backends.

The judging code is hashed by what it is, not by where it sits (`judge_sha256`): each top-level
statement of its Python files, without comments, docstrings or layout, together with what the
module-level names it uses are bound to, followed through imports between judging files. So a
function moved from one judging file to another, a docstring or a reformatting leaves every
record fresh; any change to what a statement does, or to what a name in it means, does not.
The rule is written down in docs/architecture.md.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envhub.config import REPO_ROOT
from envhub.families import family_class

if TYPE_CHECKING:
    from envhub.tasks.model import Task

LIBRARY = REPO_ROOT / "verifiers"
#: The verifier runtime's part of every key: how pytest runs and how its result becomes a verdict,
#: and the packages it runs with. How a verify is carried out (cold or warm, `envhub/verify`'s
#: other modules) is not: like the sandbox backends, tests hold it to the same verdicts.
RUNTIME = (REPO_ROOT / "envhub" / "verify" / "verdict.py", REPO_ROOT / "envhub" / "verify" / "plugin.py",
           LIBRARY / "requirements.txt")


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
    """The code that judges `task`: the verifier runtime's verdict (`RUNTIME`), the family's judging
    files (`Family.judge_files`), and the `verifiers` modules that its tests and those family files
    import, with what those import in turn (not the whole library, so one family's helper changes
    leave others fresh)."""
    family_files = family_class(task.family).judge_files(task)
    direct = {"__init__", *_family_imports(task.family)}
    for test in task.tests_dir.rglob("*.py"):
        direct |= verifier_imports(test.read_text(errors="replace"))
    modules = set().union(*(_library_closure(m) for m in direct))
    return [*RUNTIME, *family_files, *sorted(LIBRARY / f"{m}.py" for m in modules)]


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


def judge_sha256(task: Task) -> str:
    """The judging code's hash (`judge_parts`), by content: see `JudgingCode`."""
    return _code_sha256(tuple(f for part in judge_parts(task) for f in _files(part)))


@cache
def _files(part: Path) -> tuple[Path, ...]:
    """A judging part's files: itself, or what its folder holds (none where it is missing)."""
    if part.is_file():
        return (part,)
    return tuple(sorted(p for p in part.rglob("*") if p.is_file() and "__pycache__" not in p.parts))


@cache
def _code_sha256(files: tuple[Path, ...]) -> str:
    return JudgingCode(files).sha256()


def _sha(*texts: str) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode())
        h.update(b"\0")
    return h.hexdigest()


def _module_name(path: Path) -> str:
    """`verifiers/swe.py` -> `verifiers.swe`, `environments/swe/forgers/__init__.py` ->
    `environments.swe.forgers` (a file outside the checkout keeps its path: nothing imports it)."""
    try:
        rel = path.relative_to(REPO_ROOT).with_suffix("")
    except ValueError:
        return path.as_posix()
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or ([] if isinstance(node, ast.Module) else [ast.Pass()])
    return tree


def _bound_names(stmt: ast.stmt) -> set[str]:
    """The module-level names a top-level statement binds (inside an `if`/`try` too, never in a
    function's or class's body)."""
    names: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        todo.extend(ast.iter_child_nodes(node))
    return names


@dataclass(frozen=True)
class _Statement:
    node: ast.stmt
    text: str  # as `ast.unparse` writes it: no comment, no layout
    binds: frozenset[str]
    mentions: frozenset[str]


@cache
def _statements(path: Path) -> tuple[_Statement, ...] | None:
    """The top-level statements of a Python file, docstrings dropped (None: not Python)."""
    if path.suffix != ".py":
        return None
    try:
        tree = _without_docstrings(ast.parse(path.read_bytes(), filename=str(path)))
    except (SyntaxError, ValueError):
        return None
    out = []
    for stmt in tree.body:
        binds = _bound_names(stmt)
        mentions = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)} - binds
        out.append(_Statement(stmt, ast.unparse(stmt), frozenset(binds), frozenset(mentions)))
    return tuple(out)


class JudgingCode:
    """The content hash of a set of judging files.

    A statement's digest is its text as `ast.unparse` writes it (docstrings dropped) with the
    digests of the module-level names it mentions, as its own module binds them: a definition
    there, or, through `from M import name` where M is one of these files, M's binding of it
    (an import from anywhere else stays as written). The hash is that of the set of digests of
    every statement but those imports, and of every other file's bytes. A name bound by
    statements that refer to each other in a circle is cut at the circle, by name."""

    def __init__(self, files: tuple[Path, ...]) -> None:
        self.modules: dict[str, tuple[Path, tuple[_Statement, ...]]] = {}
        self.others: list[str] = []
        for path in files:
            statements = _statements(path)
            if statements is None:  # not Python: its bytes count
                self.others.append(_sha("file", _part_sha256(path)))
            else:
                self.modules[_module_name(path)] = (path, statements)
        self.bindings: dict[str, dict[str, list[_Statement]]] = {}
        for name, (_, body) in self.modules.items():
            table: dict[str, list[_Statement]] = {}
            for stmt in body:
                for bound in stmt.binds:
                    table.setdefault(bound, []).append(stmt)
            self.bindings[name] = table
        self.memo: dict[int, str] = {}
        self.open: set[int] = set()

    def sha256(self) -> str:
        found = set(self.others)
        for module, (_, body) in self.modules.items():
            for stmt in body:
                if not (isinstance(stmt.node, (ast.Import, ast.ImportFrom)) and self._internal(module, stmt.node)):
                    found.add(self.statement(module, stmt))
        return _sha("judging-code v1", *sorted(found))

    def _source(self, module: str, node: ast.ImportFrom) -> str:
        """The absolute module a `from ... import` reads from."""
        if not node.level:
            return node.module or ""
        path = self.modules[module][0]
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = package[:len(package) - node.level + 1]
        return ".".join(base + ([node.module] if node.module else []))

    def _internal(self, module: str, node: ast.Import | ast.ImportFrom) -> bool:
        """Whether every name the import binds comes from one of these files."""
        if isinstance(node, ast.Import):
            return all(a.name in self.modules for a in node.names)
        source = self._source(module, node)
        return source in self.modules or all(f"{source}.{a.name}" in self.modules for a in node.names)

    def statement(self, module: str, stmt: _Statement) -> str:
        key = id(stmt)
        if key in self.memo:
            return self.memo[key]
        if key in self.open:  # a circle: the name stands for itself
            return _sha("circle", *sorted(stmt.binds))
        self.open.add(key)
        table = self.bindings[module]
        deps = [f"{name}={self.binding(module, name)}" for name in sorted(stmt.mentions) if name in table]
        self.open.discard(key)
        self.memo[key] = digest = _sha(stmt.text, *deps)
        return digest

    def binding(self, module: str, name: str) -> str:
        """What `name` means in `module`: the digests of the statements that bind it there, an
        import between these files followed to its source (so a binding reads the same there)."""
        return _sha(*self._bound_by(module, name, set()))

    def _bound_by(self, module: str, name: str, seen: set[tuple[str, str]]) -> list[str]:
        if (module, name) in seen:  # imports in a circle bind nothing
            return [_sha("unbound", module, name)]
        seen.add((module, name))
        out = []
        for stmt in self.bindings[module][name]:
            node = stmt.node
            if isinstance(node, ast.ImportFrom) and self._internal(module, node):
                source = self._source(module, node)
                alias = next((a for a in node.names if (a.asname or a.name) == name), None)
                if alias is not None and f"{source}.{alias.name}" in self.modules:
                    out.append(_sha("module", f"{source}.{alias.name}"))
                elif alias is not None and alias.name in self.bindings.get(source, {}):
                    out += self._bound_by(source, alias.name, seen)
                else:
                    out.append(_sha("unbound", source, name))
            elif isinstance(node, ast.Import) and self._internal(module, node):
                out.append(_sha("module", name))
            else:
                out.append(self.statement(module, stmt))
        return out


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
