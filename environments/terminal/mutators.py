"""Validation mutators for terminal tasks: perturb the oracle's final workspace; each must fail.

The outputs are what the oracle changed: files that are new or differ from the task's `state/`
(contents or mode), outside `.git/`, leaving out by-products (pid files, objects) and the
files a task lists in `metadata.mutants_skip_files` (what its verifier regenerates itself, like
a service's log). Files the prompt names come first, data before code (a
script is judged by running it, where one line may not matter), answers (new files) before
edited inputs. A mutator perturbs one output the way a careless or lazy agent would get
it wrong (a number off by one, a line dropped or doubled, a wrong mode, a file cut short, a
stale copy left in place) and returns False when the task has no output it applies to. A mutant
that survives means the verifier cannot tell the wrong output from the right one: `envhub
validate` rejects the task until its tests are made sharper.

A task may declare a mutator meaningless for it, with the reason, in `task.yaml`:
`metadata: {mutants_not_applicable: {drop_line: "why a dropped line is still a right answer"}}`.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

from envhub.env import Mutator
from envhub.tasks.model import Task

MAX_TEXT = 1024 * 1024
_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--|;)")


def _files(root: Path) -> dict[str, Path]:
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(root).parts}


BYPRODUCTS = (".pid", ".o", ".lock", ".pyc", ".orig", ".rej")
CODE = {".sh", ".py", ".c", ".h", ".pl", ".rb", ".js", ".awk", ".sed", ".mk"}


def _changed(task: Task, state: Path) -> list[tuple[str, Path, Path | None]]:
    """(relative path, final file, initial file or None) for every output the oracle left:
    named in the prompt first, new files before edited ones."""
    initial = _files(task.state_dir)
    skip = set(task.config.metadata.get("mutants_skip_files") or [])
    out = []
    for rel, p in _files(state).items():
        before = initial.get(rel)
        if rel.endswith(BYPRODUCTS) or "__pycache__" in rel or rel in skip:
            continue
        if before is None or before.read_bytes() != p.read_bytes() or \
                stat.S_IMODE(before.stat().st_mode) != stat.S_IMODE(p.stat().st_mode):
            out.append((rel, p, before))
    named = lambda rel: rel in task.prompt or f"`{Path(rel).name}`" in task.prompt  # noqa: E731
    return sorted(out, key=lambda x: (not named(x[0]), _is_code(x[1]), x[2] is not None, x[0]))


def _is_code(p: Path) -> bool:
    """Scripts and sources are judged by running them, where a line's meaning varies: data first."""
    if p.suffix in CODE or p.name == "Makefile":
        return True
    with p.open("rb") as f:
        return f.read(2) == b"#!"


def _text(p: Path) -> str | None:
    if p.stat().st_size > MAX_TEXT:
        return None
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.strip() else None


def _texts(task: Task, state: Path) -> list[tuple[Path, str]]:
    """Changed text outputs, in `_changed`'s order."""
    return [(p, t) for _, p, _ in _changed(task, state) if (t := _text(p)) is not None]


def _content_lines(text: str) -> list[int]:
    """Indexes of lines that carry content (not blank, not a comment, not a shebang)."""
    return [i for i, line in enumerate(text.splitlines()) if line.strip() and not _COMMENT.match(line)]


def _rewrite(p: Path, text: str) -> None:
    mode = stat.S_IMODE(p.stat().st_mode)
    p.chmod(mode | stat.S_IWUSR)
    p.write_text(text, encoding="utf-8")
    p.chmod(mode)


def number_off_by_one(task: Task, state: Path) -> bool:
    """The last number on a content line of an output is one more than it should be."""
    for p, text in _texts(task, state):
        lines = text.splitlines(keepends=True)
        for i in reversed(_content_lines(text)):
            m = None
            for m in re.finditer(r"(?<![\w.])\d+(?![\w])", lines[i]):
                pass
            if m is not None:
                lines[i] = lines[i][:m.start()] + str(int(m.group()) + 1) + lines[i][m.end():]
                _rewrite(p, "".join(lines))
                return True
    return False


def drop_line(task: Task, state: Path) -> bool:
    """One content line of an output is missing (the last one)."""
    for p, text in _texts(task, state):
        idx = _content_lines(text)
        if idx:
            lines = text.splitlines(keepends=True)
            del lines[idx[-1]]
            _rewrite(p, "".join(lines))
            return True
    return False


def duplicate_line(task: Task, state: Path) -> bool:
    """One content line of an output appears twice."""
    for p, text in _texts(task, state):
        idx = _content_lines(text)
        if idx:
            lines = text.splitlines(keepends=True)
            line = lines[idx[-1]] if lines[idx[-1]].endswith("\n") else lines[idx[-1]] + "\n"
            lines.insert(idx[-1], line)
            _rewrite(p, "".join(lines))
            return True
    return False


def truncate_file(task: Task, state: Path) -> bool:
    """An output cut off halfway (an interrupted write): a text output, else a binary one (an
    archive, an image)."""
    texts = {p for p, _ in _texts(task, state)}
    for _, p, before in sorted(_changed(task, state), key=lambda x: x[1] not in texts):
        data = p.read_bytes()
        if len(data) >= 4 and (before is None or before.read_bytes() != data):
            mode = stat.S_IMODE(p.stat().st_mode)
            p.chmod(mode | stat.S_IWUSR)
            p.write_bytes(data[: len(data) // 2])
            p.chmod(mode)
            return True
    return False


def wrong_permission(task: Task, state: Path) -> bool:
    """A mode the oracle changed on an existing file is back to what it was.

    (New files are left alone: whether a new script needs +x depends on how it is run.)"""
    for _, p, before in _changed(task, state):
        mode = stat.S_IMODE(p.stat().st_mode)
        if before is not None and stat.S_IMODE(before.stat().st_mode) != mode:
            p.chmod(stat.S_IMODE(before.stat().st_mode) | stat.S_IRUSR)
            return True
    return False


def stale_output(task: Task, state: Path) -> bool:
    """A file the task asked to change is left as it was: the stale copy."""
    for _, p, before in _changed(task, state):
        if before is not None and before.read_bytes() != p.read_bytes():
            mode = stat.S_IMODE(p.stat().st_mode)
            p.chmod(mode | stat.S_IWUSR)
            p.write_bytes(before.read_bytes())
            p.chmod(mode)
            return True
    return False


def _unless_declared(name: str, mutate: Mutator) -> Mutator:
    def run(task: Task, state: Path) -> bool:
        if name in (task.config.metadata.get("mutants_not_applicable") or {}):
            return False
        return mutate(task, state)
    run.__doc__ = mutate.__doc__
    return run


MUTATORS: dict[str, Mutator] = {name: _unless_declared(name, fn) for name, fn in {
    "number_off_by_one": number_off_by_one,
    "drop_line": drop_line,
    "duplicate_line": duplicate_line,
    "truncate_file": truncate_file,
    "wrong_permission": wrong_permission,
    "stale_output": stale_output,
}.items()}
