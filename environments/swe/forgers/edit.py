"""What every language's forger needs: the library's own files, and text appended to them."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from environments.swe.controls import _sources as sources
from verifiers.swe import SweConfig

__all__ = ["append", "closing_bracket", "insert_before_data", "node_sources", "rewrite_each", "sources"]


def append(paths: list[Path], text: str) -> bool:
    """`text` appended to each of `paths`; whether there was any."""
    for p in paths:
        p.write_text(p.read_text() + text)
    return bool(paths)


def rewrite_each(paths: list[Path], rewrite: Callable[[str], str | None]) -> bool:
    """Each of `paths` given the text `rewrite` makes of it (None or the same text: left alone);
    whether any was changed."""
    changed = False
    for p in paths:
        text = p.read_text()
        new = rewrite(text)
        if new is not None and new != text:
            p.write_text(new)
            changed = True
    return changed


def closing_bracket(masked: str, open_at: int) -> int:
    """Where the bracket opened at `open_at` closes in `masked` (source with its comments and
    literals blanked), -1: nowhere."""
    depth = 0
    for i in range(open_at, len(masked)):
        if masked[i] in "([{":
            depth += 1
        elif masked[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def insert_before_data(path: Path, text: str, end: re.Pattern[str]) -> None:
    """`text` as code of `path`: before the marker that ends its code (`end`: Perl's `__END__` or
    `__DATA__`, Ruby's `__END__`; what follows is data), else at its end."""
    src = path.read_text()
    m = end.search(src)
    path.write_text(src[:m.start()] + text.lstrip("\n") + "\n" + src[m.start():] if m else src + text)


def node_sources(repo: Path, cfg: SweConfig) -> list[Path]:
    """CommonJS library files (ES modules have no `module` to wrap; none of the tasks has one)."""
    if cfg.language == "typescript":
        return [p for p in sources(repo, cfg, (".ts",)) if not p.name.endswith(".d.ts")]
    return sources(repo, cfg, (".js", ".cjs"))
